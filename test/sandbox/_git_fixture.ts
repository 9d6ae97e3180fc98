/**
 * Real git repositories and a minimal bubblewrap sandbox for the git metadata tests: the user's git runs
 * on the host with no global or system config, the model's commands run inside bwrap with (or without)
 * the protection plan's mounts.
 *
 * @module
 */
import { join } from "node:path";
import type { GitProtection } from "../../src/sandbox/git_metadata.ts";

/** Environment of every git and bwrap run: no user or system config, a fixed identity. */
const GIT_ENV: Record<string, string> = {
  PATH: "/usr/local/bin:/usr/bin:/bin",
  LANG: "C",
  HOME: "/nonexistent",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@t",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@t",
  GIT_TERMINAL_PROMPT: "0",
};

/** Exit code and output of a finished process. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(command: string, args: string[], cwd: string): Promise<Run> {
  const output = await new Deno.Command(command, { args, cwd, env: GIT_ENV, clearEnv: true, stdin: "null" })
    .output();
  const decoder = new TextDecoder();
  return { code: output.code, stdout: decoder.decode(output.stdout), stderr: decoder.decode(output.stderr) };
}

/** Runs the user's git on the host in `cwd`; never throws. */
export async function git(cwd: string, ...args: string[]): Promise<Run> {
  return await run("git", ["-c", "protocol.file.allow=always", ...args], cwd);
}

/** Runs git on the host and returns its stdout; throws with git's stderr when it fails. */
export async function gitOk(cwd: string, ...args: string[]): Promise<string> {
  const result = await git(cwd, ...args);
  if (result.code !== 0) throw new Error(`git ${args.join(" ")} failed in "${cwd}": ${result.stderr}`);
  return result.stdout;
}

/** Runs a POSIX shell script in `cwd` with the git environment, as a sandboxed command would; throws when it fails. */
export async function shellOk(cwd: string, script: string): Promise<string> {
  const result = await run("sh", ["-ec", script], cwd);
  if (result.code !== 0) {
    throw new Error(`sh -c ${JSON.stringify(script)} failed in "${cwd}": ${result.stderr}`);
  }
  return result.stdout;
}

/** Creates a repository with one commit (a tracked file) at `path`. */
export async function createRepository(path: string): Promise<void> {
  await Deno.mkdir(path, { recursive: true });
  await gitOk(path, "init", "-q", "-b", "main");
  await Deno.writeTextFile(join(path, "README"), "hello\n");
  await gitOk(path, "add", "README");
  await gitOk(path, "commit", "-q", "-m", "init");
}

/** The bubblewrap arguments of the tests' sandbox: the whole machine read-only, the workspace writable. */
export function sandboxArguments(root: string, protection: GitProtection | null): string[] {
  const args = [
    "--die-with-parent",
    "--unshare-pid",
    "--cap-drop",
    "ALL",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    "--bind",
    root,
    root,
  ];
  if (protection !== null) {
    for (const path of protection.keepInPlace) args.push("--bind", path, path);
    for (const path of protection.readOnly) args.push("--ro-bind", path, path);
    for (const path of protection.placeholders) args.push("--tmpfs", path, "--remount-ro", path);
  }
  args.push("--chdir", root, "--", "/bin/bash", "-c");
  return args;
}

/** Runs a bash script inside the sandbox with the workspace as its working directory. */
export async function runSandboxed(
  root: string,
  protection: GitProtection | null,
  script: string,
): Promise<Run> {
  return await run("bwrap", [...sandboxArguments(root, protection), script], root);
}

/** Whether bubblewrap can create a sandbox here (user namespaces allowed, or running as root). */
export async function bubblewrapWorks(): Promise<boolean> {
  const root = await Deno.makeTempDir();
  try {
    return (await runSandboxed(root, null, "true")).code === 0;
  } catch {
    return false;
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

export { exists } from "../_fakes/exists.ts";

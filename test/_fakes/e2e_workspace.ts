/**
 * A temp workspace and MEWCODE_HOME for end-to-end runs of `scripts/mewcode` against the fake Anthropic
 * server, with the session transcript at hand.
 *
 * @module
 */
import { equal } from "node:assert/strict";
import { join } from "node:path";
import { workspaceSlug } from "../../src/config/home.ts";
import { readTranscript, type TranscriptRecord } from "../../src/session/transcript.ts";
import type { FakeAnthropic } from "../fake_anthropic/server.ts";
import { type CliRun, type CliRunOptions, LAUNCHER, runMewcode } from "./run_cli.ts";

/** A temp workspace and MEWCODE_HOME, removed by `await using`. */
export class E2eWorkspace implements AsyncDisposable {
  constructor(readonly root: string, readonly home: string) {}

  static async create(): Promise<E2eWorkspace> {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-e2e-ws-" }));
    const home = await Deno.makeTempDir({ prefix: "mewcode-e2e-home-" });
    return new E2eWorkspace(root, home);
  }

  path(...parts: string[]): string {
    return join(this.root, ...parts);
  }

  async write(relative: string, content: string): Promise<string> {
    const path = this.path(relative);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.writeTextFile(path, content);
    return path;
  }

  /** Runs `mewcode -p PROMPT ...args` in the workspace against the server. */
  run(server: FakeAnthropic, args: string[], prompt = "Do the task"): Promise<CliRun> {
    return this.exec(server, ["-p", prompt, ...args]);
  }

  /** Runs `mewcode ...args` in the workspace against the server (stdin: /dev/null unless given). */
  exec(
    server: FakeAnthropic,
    args: string[],
    options: Omit<CliRunOptions, "cwd" | "env"> = {},
  ): Promise<CliRun> {
    return runMewcode(args, { cwd: this.root, env: this.env(server), ...options });
  }

  /** The environment of a run against the server. */
  env(server: FakeAnthropic): Record<string, string> {
    return { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "test", MEWCODE_HOME: this.home };
  }

  /**
   * Starts `scripts/mewcode ...args` in the workspace against `server` and returns the running process, its
   * output discarded: for a test that kills it, or holds it, while it runs.
   */
  spawn(server: FakeAnthropic, args: string[]): Deno.ChildProcess {
    return new Deno.Command(LAUNCHER, {
      args,
      cwd: this.root,
      env: this.env(server),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
  }

  /** The records of the one session transcript of this workspace. */
  async transcript(): Promise<{ path: string; records: TranscriptRecord[]; torn: boolean }> {
    const dir = join(this.home, "projects", await workspaceSlug(this.root));
    const files = (await Array.fromAsync(Deno.readDir(dir))).filter((entry) => entry.name.endsWith(".jsonl"));
    equal(files.length, 1, `one transcript in ${dir}`);
    const path = join(dir, files[0]!.name);
    return { path, ...await readTranscript(path) };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await removeSettled(this.root);
    await removeSettled(this.home);
  }
}

/**
 * Removes a folder that a mewcode being stopped may still be writing in (a sandbox it replaces as it ends
 * makes its mount points): a removal that meets a folder filled meanwhile tries again, for a second at most.
 */
async function removeSettled(path: string): Promise<void> {
  for (let attempt = 0;; attempt++) {
    try {
      return await Deno.remove(path, { recursive: true });
    } catch (error) {
      if (attempt >= 20 || !(error instanceof Error) || !/not empty/i.test(error.message)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

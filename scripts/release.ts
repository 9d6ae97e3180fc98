/**
 * `deno task release`: everything a release ships, in dist/release/:
 *
 *   mewcode-<target>[.exe]   the `deno compile` binary of every target (scripts/compile.ts)
 *   mewcode-<version>.tgz    the npm package (`npm pack`, with bundle/ built just before: scripts/bundle.ts),
 *                            for `npm install -g <url or file>`
 *   install.sh               the installer (scripts/install.sh) for `curl -fsSL …/install.sh | sh`
 *   SHA256SUMS               `<sha256>  <file>` for each of the above
 *
 *   deno task release                          build it all
 *   deno task release --dry-run                print every step as a shell command, run none
 *   deno task release --tag v1.2.3             refuse unless the tag names this version
 *   deno task release --tag v1.2.3 --repository OWNER/NAME --publish
 *                                              also point install.sh at that GitHub release, then create
 *                                              the release with the files (gh)
 *
 * The compiles download each target's Deno runtime from dl.deno.land, and --publish needs `gh` with a
 * token (GH_TOKEN): the release workflow (.github/workflows/release.yml) runs this on a hosted runner.
 *
 * @module
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { assertNever } from "../src/common/errors.ts";
import { buildBundle, BundleError } from "./bundle.ts";
import { binaryName, compileArguments, readRuntimeFlags, TARGETS } from "./compile.ts";
import { CHECKSUMS_FILE, writeChecksums } from "./checksums.ts";

/** Where the release files go, relative to the checkout. */
export const RELEASE_DIR = "dist/release";

const INSTALL_SCRIPT = "scripts/install.sh";

/** The download URL of a GitHub release's files: where install.sh fetches the binaries. */
export function githubReleaseUrl(repository: string, tag: string): string {
  if (!/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(repository)) {
    throw new RangeError(`Cannot use the repository "${repository}": give it as OWNER/NAME`);
  }
  if (!/^[A-Za-z0-9_.+-]+$/.test(tag)) {
    throw new RangeError(`Cannot use the tag "${tag}": not a plain tag name`);
  }
  return `https://github.com/${repository}/releases/download/${tag}`;
}

/** One step of a release. */
export type ReleaseStep =
  | { kind: "clean" }
  | { kind: "run"; program: "deno" | "npm" | "gh"; args: readonly string[] }
  | { kind: "install-script"; releaseUrl: string | null }
  /** Builds bundle/ (scripts/bundle.ts), which the npm package ships. */
  | { kind: "bundle" }
  /** Runs the binary built for this machine (`--version`): a build that does not start is not published. */
  | { kind: "smoke"; binary: string; version: string }
  | { kind: "checksums"; files: readonly string[] };

/** What a release is made from. */
export interface ReleaseOptions {
  version: string;
  /** The runtime flags (scripts/runtime_flags.txt). */
  flags: readonly string[];
  /** The git tag to publish as a GitHub release, or null to publish nothing. */
  publishTag: string | null;
  /** Where the release's files will be downloaded from (install.sh's default), or null for none. */
  releaseUrl: string | null;
}

/** The files of a release of `version` (SHA256SUMS aside). */
export function releaseFiles(version: string): string[] {
  return [...TARGETS.map(binaryName), `mewcode-${version}.tgz`, "install.sh"];
}

/** The steps of a release, in order. */
export function releasePlan(options: ReleaseOptions): ReleaseStep[] {
  const files = releaseFiles(options.version);
  const steps: ReleaseStep[] = [
    { kind: "clean" },
    ...TARGETS.map((target): ReleaseStep => ({
      kind: "run",
      program: "deno",
      args: compileArguments(options.flags, target, { outputDir: RELEASE_DIR }),
    })),
    ...(TARGETS.some((target) => target === Deno.build.target)
      ? [{
        kind: "smoke" as const,
        binary: `${RELEASE_DIR}/${binaryName(Deno.build.target)}`,
        version: options.version,
      }]
      : []),
    // The npm package ships the bundle (scripts/bundle.ts), built from the sources it ships beside.
    { kind: "bundle" },
    { kind: "run", program: "npm", args: ["pack", "--pack-destination", RELEASE_DIR] },
    { kind: "install-script", releaseUrl: options.releaseUrl },
    { kind: "checksums", files },
  ];
  if (options.publishTag !== null) {
    const tag = options.publishTag;
    steps.push({
      kind: "run",
      program: "gh",
      args: [
        "release",
        "create",
        tag,
        "--verify-tag",
        "--title",
        `mewcode ${tag}`,
        "--generate-notes",
        ...[...files, CHECKSUMS_FILE].map((file) => `${RELEASE_DIR}/${file}`),
      ],
    });
  }
  return steps;
}

/** install.sh with `releaseUrl` as the release it installs from when MEWCODE_RELEASE_URL is not set. */
export function installScriptFor(script: string, releaseUrl: string | null): string {
  const line = /^DEFAULT_RELEASE_URL=.*$/m;
  if (!line.test(script)) {
    throw new SyntaxError(`Cannot fill in ${INSTALL_SCRIPT}: no DEFAULT_RELEASE_URL line`);
  }
  return releaseUrl === null ? script : script.replace(line, `DEFAULT_RELEASE_URL="${releaseUrl}"`);
}

/** A step as the shell command that does the same (what --dry-run prints). */
export function describeStep(step: ReleaseStep): string {
  switch (step.kind) {
    case "clean":
      return `rm -rf ${RELEASE_DIR} && mkdir -p ${RELEASE_DIR}`;
    case "run":
      return [step.program, ...step.args].map(shellWord).join(" ");
    case "install-script":
      if (step.releaseUrl === null) return `cp ${INSTALL_SCRIPT} ${RELEASE_DIR}/install.sh`;
      return `sed ${shellWord(`s|^DEFAULT_RELEASE_URL=.*|DEFAULT_RELEASE_URL="${step.releaseUrl}"|`)} ` +
        `${INSTALL_SCRIPT} > ${RELEASE_DIR}/install.sh`;
    case "smoke":
      return `${step.binary} --version  # must print "mewcode ${step.version} "`;
    case "bundle":
      return "deno task bundle";
    case "checksums":
      return `(cd ${RELEASE_DIR} && sha256sum ${
        [...step.files].sort().map(shellWord).join(" ")
      } > ${CHECKSUMS_FILE})`;
    default:
      return assertNever(step);
  }
}

/** Runs a `run` step's program ("deno" is the Deno running this) in `cwd`; resolves to its exit code. */
export type Spawn = (step: ReleaseStep & { kind: "run" }, cwd: string) => Promise<number>;

/** How `runRelease` runs. */
export interface RunReleaseOptions {
  /** The checkout to release. */
  root: string;
  /** Runs the `run` steps; by default as child processes sharing this terminal. */
  spawn?: Spawn;
  /** Told each step before it runs. */
  log?: (line: string) => void;
}

/** Runs a release plan; resolves to null when every step succeeded, else to what failed. */
export async function runRelease(
  plan: readonly ReleaseStep[],
  options: RunReleaseOptions,
): Promise<string | null> {
  for (const step of plan) {
    options.log?.(describeStep(step));
    const failure = await runStep(step, options.root, options.spawn ?? spawnProcess);
    if (failure !== null) return failure;
  }
  return null;
}

async function spawnProcess(step: ReleaseStep & { kind: "run" }, cwd: string): Promise<number> {
  const program = step.program === "deno" ? Deno.execPath() : step.program;
  return (await new Deno.Command(program, { args: [...step.args], cwd }).spawn().status).code;
}

async function runStep(step: ReleaseStep, root: string, spawn: Spawn): Promise<string | null> {
  const at = (path: string) => join(root, path);
  switch (step.kind) {
    case "clean":
      await Deno.remove(at(RELEASE_DIR), { recursive: true }).catch((error) => {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      });
      await Deno.mkdir(at(RELEASE_DIR), { recursive: true });
      return null;
    case "bundle":
      try {
        await buildBundle(at("bundle"), { root });
        return null;
      } catch (error) {
        if (!(error instanceof BundleError)) throw error;
        return `building the bundle failed: ${error.message}`;
      }
    case "run": {
      const code = await spawn(step, root);
      if (code === 0) return null;
      const hint = step.program === "deno"
        ? " (a target's first compile downloads its runtime from dl.deno.land)"
        : "";
      return `${describeStep(step)} failed with exit ${code}${hint}`;
    }
    case "install-script": {
      const script = await Deno.readTextFile(at(INSTALL_SCRIPT));
      await Deno.writeTextFile(at(`${RELEASE_DIR}/install.sh`), installScriptFor(script, step.releaseUrl));
      return null;
    }
    case "smoke": {
      const output = await new Deno.Command(at(step.binary), {
        args: ["--version"],
        stdout: "piped",
        stderr: "piped",
      })
        .output().catch((error: unknown) => error);
      if (output instanceof Error) return `${step.binary} does not start: ${output.message}`;
      const printed = new TextDecoder().decode((output as Deno.CommandOutput).stdout).trim();
      if ((output as Deno.CommandOutput).success && printed.startsWith(`mewcode ${step.version} `)) {
        return null;
      }
      return `${step.binary} --version printed "${printed}" (exit ${(output as Deno.CommandOutput).code}), ` +
        `not "mewcode ${step.version} …": the build does not run; nothing was published`;
    }
    case "checksums": {
      const missing = [];
      for (const file of step.files) {
        if (!await exists(at(`${RELEASE_DIR}/${file}`))) missing.push(file);
      }
      if (missing.length > 0) return `Cannot write ${CHECKSUMS_FILE}: missing ${missing.join(", ")}`;
      await writeChecksums(at(RELEASE_DIR), step.files);
      return null;
    }
    default:
      return assertNever(step);
  }
}

/** A word as the shell reads it: plain words bare, anything else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

async function readVersion(root: URL, file: string): Promise<string> {
  const value: unknown = JSON.parse(await Deno.readTextFile(new URL(file, root)));
  const version = typeof value === "object" && value !== null && "version" in value ? value.version : null;
  if (typeof version !== "string") throw new SyntaxError(`Cannot read the version in ${file}`);
  return version;
}

/** The command line's options, or null (after saying why) when it has an unknown one. */
function parseOptions(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        "dry-run": { type: "boolean" },
        tag: { type: "string" },
        publish: { type: "boolean" },
        repository: { type: "string" },
      },
    }).values;
  } catch (error) {
    console.error(`release: ${error instanceof Error ? error.message : String(error)}`);
    console.error(
      "usage: deno task release [--dry-run] [--tag vX.Y.Z [--repository OWNER/NAME] [--publish]]",
    );
    return null;
  }
}

async function main(): Promise<number> {
  const root = new URL("../", import.meta.url);
  const values = parseOptions(Deno.args);
  if (values === null) return 2;
  const version = await readVersion(root, "package.json");
  const configVersion = await readVersion(root, "deno.json");
  if (configVersion !== version) {
    console.error(
      `release: package.json says ${version} but deno.json says ${configVersion}: make them agree`,
    );
    return 1;
  }
  if (values.tag !== undefined && values.tag !== `v${version}`) {
    console.error(
      `release: the tag "${values.tag}" does not name this version: tag v${version}, or bump the version`,
    );
    return 1;
  }
  if ((values.publish || values.repository !== undefined) && values.tag === undefined) {
    console.error(
      "release: --publish and --repository need --tag vX.Y.Z (the tag the GitHub release is made from)",
    );
    return 2;
  }
  let releaseUrl: string | null = null;
  try {
    if (values.repository !== undefined) releaseUrl = githubReleaseUrl(values.repository, values.tag ?? "");
  } catch (error) {
    console.error(`release: ${error instanceof Error ? error.message : String(error)}`);
    return 2;
  }
  const plan = releasePlan({
    version,
    flags: await readRuntimeFlags(),
    publishTag: values.publish ? values.tag ?? null : null,
    releaseUrl,
  });
  if (values["dry-run"]) {
    for (const step of plan) console.log(describeStep(step));
    return 0;
  }
  const failure = await runRelease(plan, {
    root: fileURLToPath(root),
    log: (line) => console.error(`release: ${line}`),
  });
  if (failure !== null) {
    console.error(`release: ${failure}`);
    return 1;
  }
  console.error(`release: mewcode ${version} is in ${RELEASE_DIR}/`);
  return 0;
}

if (import.meta.main) Deno.exit(await main());

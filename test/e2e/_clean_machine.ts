/**
 * A clean machine for the install tests: an empty HOME, an empty npm cache, and a PATH of system tools
 * (Node.js and npm included) on which there is no Deno, so whatever runs Deno must bring its own.
 *
 * @module
 */
import { join } from "node:path";
import { explainRun } from "../_fakes/run_cli.ts";

/** The system tools the install channels and the launcher may use, when the machine has them. */
const SYSTEM_TOOLS = (
  "sh bash env sed awk grep find head cut tr sort cat readlink uname ls mkdir rm cp mv ln chmod dirname " +
  "basename mktemp id tar gzip curl wget sha256sum shasum perl git node npm npx"
).split(" ");

/** The result of one finished process. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options for one process on the clean machine. */
export interface RunOptions {
  cwd?: string;
  /** Added to the clean environment. */
  env?: Record<string, string>;
  stdin?: string;
}

/**
 * The machine's own network settings, which a fresh machine has too (they are not in HOME): its certificate
 * authorities and proxies. Ours inspects TLS: npm, Deno (NODE_EXTRA_CA_CERTS) and curl learn its authority
 * from these.
 */
const MACHINE_SETTINGS = (
  "NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE " +
  "HTTPS_PROXY HTTP_PROXY NO_PROXY https_proxy http_proxy no_proxy"
).split(" ");

/** No process of an install test may take longer (a cold npm install downloads Deno, ~40 MB). */
export const RUN_LIMIT_MS = 240_000;

/** A scratch directory with a clean HOME, npm cache and tool PATH; removed by `await using`. */
export class CleanMachine implements AsyncDisposable {
  private constructor(readonly root: string) {}

  /** Creates the machine; `npmCache` shares a cache between machines (a warm cache). */
  static async create(options: { npmCache?: string } = {}): Promise<CleanMachine> {
    const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-clean-" }));
    const machine = new CleanMachine(root);
    for (const dir of [machine.home, machine.tools, machine.workspace]) await Deno.mkdir(dir);
    if (options.npmCache === undefined) await Deno.mkdir(machine.npmCache);
    else await Deno.symlink(options.npmCache, machine.npmCache);
    for (const tool of SYSTEM_TOOLS) {
      const path = systemTool(tool);
      if (path !== null) await Deno.symlink(path, join(machine.tools, tool));
    }
    return machine;
  }

  get home(): string {
    return join(this.root, "home");
  }

  get npmCache(): string {
    return join(this.root, "npm-cache");
  }

  /** A directory holding only the system tools (no deno). */
  get tools(): string {
    return join(this.root, "tools");
  }

  /** An empty directory to run mewcode in. */
  get workspace(): string {
    return join(this.root, "workspace");
  }

  /** The environment of every process: the machine's network settings, nothing else of the test's own. */
  env(extra: Record<string, string> = {}): Record<string, string> {
    const settings = MACHINE_SETTINGS.flatMap((name) => {
      const value = Deno.env.get(name);
      return value === undefined ? [] : [[name, value]];
    });
    return {
      ...Object.fromEntries(settings),
      HOME: this.home,
      PATH: this.tools,
      npm_config_cache: this.npmCache,
      ...extra,
    };
  }

  /** Runs a program with the clean environment. */
  async run(command: string, args: readonly string[], options: RunOptions = {}): Promise<Run> {
    const child = new Deno.Command(command, {
      args: [...args],
      cwd: options.cwd ?? this.workspace,
      clearEnv: true,
      env: this.env(options.env),
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(RUN_LIMIT_MS),
    }).spawn();
    if (options.stdin !== undefined) {
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(options.stdin));
      await writer.close();
    }
    const output = await child.output();
    const decoder = new TextDecoder();
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: decoder.decode(output.stderr),
    };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Deno.remove(this.root, { recursive: true });
  }
}

/** What a run printed, for assertion messages. */
/** A finished run as an assertion's message (`explainRun`). */
export const explain: (run: Run) => string = explainRun;

/** Copies the files `npm pack` would pack (a checkout as far as npm and the launcher care) into `dest`. */
export async function copyPackage(source: string, dest: string): Promise<void> {
  const listed = await new Deno.Command("npm", {
    args: ["pack", "--dry-run", "--json", "--ignore-scripts"],
    cwd: source,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!listed.success) {
    throw new Error(`npm pack --dry-run failed: ${new TextDecoder().decode(listed.stderr)}`);
  }
  const [pack] = JSON.parse(new TextDecoder().decode(listed.stdout)) as { files: { path: string }[] }[];
  for (const { path } of pack!.files) {
    // A bundle built here may be older than the sources; the copy, which has no .git, would run it unchecked.
    if (path.startsWith("bundle/")) continue;
    await Deno.mkdir(join(dest, path, ".."), { recursive: true });
    await Deno.copyFile(join(source, path), join(dest, path));
    await Deno.chmod(join(dest, path), (await Deno.stat(join(source, path))).mode! & 0o777);
  }
}

function systemTool(name: string): string | null {
  for (const dir of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    try {
      const path = join(dir, name);
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // not here
    }
  }
  return null;
}

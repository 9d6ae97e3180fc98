/**
 * A temporary `$MEWCODE_HOME` and workspace with helpers to write the three settings files.
 *
 * @module
 */
import { dirname, join } from "node:path";

/** A home folder and a workspace, removed by `await using`. */
export interface SettingsFixture extends AsyncDisposable {
  /** `$MEWCODE_HOME`. */
  home: string;
  /** Real path of the workspace root. */
  root: string;
  userPath: string;
  projectPath: string;
  localPath: string;
  /** Writes a file (JSON for objects, as is for strings), creating its folder. */
  write(path: string, content: unknown): Promise<void>;
}

/** Creates the fixture under the system's temporary folder. */
export async function createSettingsFixture(): Promise<SettingsFixture> {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-settings-" }));
  const home = join(base, "home", ".mewcode");
  const root = join(base, "workspace");
  await Deno.mkdir(home, { recursive: true });
  await Deno.mkdir(root, { recursive: true });
  return {
    home,
    root,
    userPath: join(home, "settings.json"),
    projectPath: join(root, ".mewcode", "settings.json"),
    localPath: join(root, ".mewcode", "settings.local.json"),
    async write(path, content) {
      await Deno.mkdir(dirname(path), { recursive: true });
      await Deno.writeTextFile(
        path,
        typeof content === "string" ? content : JSON.stringify(content, null, 2),
      );
    },
    [Symbol.asyncDispose]: () => Deno.remove(base, { recursive: true }).catch(() => undefined),
  };
}

/**
 * scripts/mewcode starts Deno with glibc's mmap threshold fixed (MALLOC_MMAP_THRESHOLD_) unless the caller set
 * it, and mewcode takes that tuning back out of the environment of what it runs as the user (main.ts): a
 * hook sees the caller's environment, while the Deno process itself started with the setting.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";

const TUNING = /^(MALLOC_MMAP_THRESHOLD_|MEWCODE_LAUNCHER_MALLOC)=/;

function tuningLines(text: string): string[] {
  return text.split(/[\n\0]/).filter((line) => TUNING.test(line)).sort();
}

/** The tuning variables a stand-in Deno (MEWCODE_DENO) was started with. */
async function seenByDeno(env: Record<string, string>): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-launcher-malloc-" });
  try {
    const fake = join(dir, "deno");
    await Deno.writeTextFile(fake, "#!/bin/sh\nenv\n");
    await Deno.chmod(fake, 0o755);
    const output = await new Deno.Command("/bin/sh", {
      args: [LAUNCHER, "--version"],
      env: { PATH: "/usr/bin:/bin", ...env, MEWCODE_DENO: fake },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(output.code, 0, new TextDecoder().decode(output.stderr));
    return tuningLines(new TextDecoder().decode(output.stdout));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("the launcher fixes glibc's mmap threshold for Deno, unless the caller set it", async () => {
  deepStrictEqual(await seenByDeno({}), ["MALLOC_MMAP_THRESHOLD_=131072", "MEWCODE_LAUNCHER_MALLOC=1"]);
  deepStrictEqual(await seenByDeno({ MALLOC_MMAP_THRESHOLD_: "65536" }), ["MALLOC_MMAP_THRESHOLD_=65536"]);
  // Set but empty is the caller's choice too.
  deepStrictEqual(await seenByDeno({ MALLOC_MMAP_THRESHOLD_: "" }), ["MALLOC_MMAP_THRESHOLD_="]);
});

Deno.test("a hook run as the user gets the caller's environment, not the launcher's tuning", async (t) => {
  for (
    const [name, callerValue] of [["the launcher set it", undefined], ["the caller set it", "65536"]] as const
  ) {
    await t.step(name, async () => {
      const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-malloc-ws-" }));
      const home = await Deno.makeTempDir({ prefix: "mewcode-malloc-home-" });
      try {
        const own = join(root, "hook-env");
        const parent = join(root, "deno-env");
        // The hook's shell is a child of mewcode's Deno process: its environ is what Deno started with.
        await Deno.writeTextFile(
          join(home, "settings.json"),
          JSON.stringify({
            hooks: {
              PostToolUse: [{
                matcher: "Glob",
                hooks: [{
                  type: "command",
                  command: `env > '${own}'; cat /proc/$PPID/environ > '${parent}'`,
                }],
              }],
            },
          }),
        );
        await Deno.writeTextFile(join(root, "a.txt"), "text\n");
        await using server = await startFakeAnthropic([
          turn().toolUse("Glob", { pattern: "*.txt" }),
          turn().text("done").stop("end_turn"),
        ]);
        // This process's environment (its Deno cache, its certificates) without the tuning, whatever it holds.
        const env: Record<string, string> = {
          ...Object.fromEntries(
            Object.entries(Deno.env.toObject()).filter(([key]) => !TUNING.test(`${key}=`)),
          ),
          MEWCODE_HOME: home,
          ANTHROPIC_API_KEY: "test",
          ANTHROPIC_BASE_URL: server.url,
        };
        if (callerValue !== undefined) env.MALLOC_MMAP_THRESHOLD_ = callerValue;
        const output = await new Deno.Command(LAUNCHER, {
          args: ["-p", "go", "--permission-mode", "bypassPermissions"],
          cwd: root,
          env,
          clearEnv: true,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
        }).output();
        equal(output.code, 0, new TextDecoder().decode(output.stderr));
        if (callerValue === undefined) {
          deepStrictEqual(tuningLines(await Deno.readTextFile(parent)), [
            "MALLOC_MMAP_THRESHOLD_=131072",
            "MEWCODE_LAUNCHER_MALLOC=1",
          ]);
          deepStrictEqual(tuningLines(await Deno.readTextFile(own)), []);
        } else {
          deepStrictEqual(tuningLines(await Deno.readTextFile(parent)), [
            `MALLOC_MMAP_THRESHOLD_=${callerValue}`,
          ]);
          deepStrictEqual(tuningLines(await Deno.readTextFile(own)), [
            `MALLOC_MMAP_THRESHOLD_=${callerValue}`,
          ]);
        }
      } finally {
        await Deno.remove(root, { recursive: true });
        await Deno.remove(home, { recursive: true });
      }
    });
  }
});

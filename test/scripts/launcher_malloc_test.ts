/**
 * mewcode takes the launcher's malloc tuning (MALLOC_MMAP_THRESHOLD_, MALLOC_TOP_PAD_ and MALLOC_ARENA_MAX, set by
 * scripts/mewcode unless the caller set any: launcher_env_test.ts) back out of the environment of what it runs as the user
 * (main.ts): a hook sees the caller's environment, while the Deno process itself started with the setting.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";

const TUNING = /^(MALLOC_MMAP_THRESHOLD_|MALLOC_TOP_PAD_|MALLOC_ARENA_MAX|MEWCODE_LAUNCHER_MALLOC)=/;

function tuningLines(text: string): string[] {
  return text.split(/[\n\0]/).filter((line) => TUNING.test(line)).sort();
}

Deno.test("a hook run as the user gets the caller's environment, not the launcher's tuning", async (t) => {
  for (
    const [name, callerValue] of [["the launcher set it", undefined], ["the caller set it", "65536"]] as const
  ) {
    await t.step(name, async () => {
      await using box = await E2eWorkspace.create();
      const own = box.path("hook-env");
      const parent = box.path("deno-env");
      await Deno.mkdir(box.home, { recursive: true });
      // The hook's shell is a child of mewcode's Deno process: its environ is what Deno started with.
      await Deno.writeTextFile(
        `${box.home}/settings.json`,
        JSON.stringify({
          hooks: {
            PostToolUse: [{
              matcher: "Glob",
              hooks: [{ type: "command", command: `env > '${own}'; cat /proc/$PPID/environ > '${parent}'` }],
            }],
          },
        }),
      );
      await box.write("a.txt", "text\n");
      await using server = await startFakeAnthropic([
        turn().toolUse("Glob", { pattern: "*.txt" }),
        turn().text("done").stop("end_turn"),
      ]);
      // This process's environment (its Deno cache, its certificates) without the tuning, whatever it holds:
      // box.exec would add to it, and could not take a variable out.
      const env: Record<string, string> = {
        ...Object.fromEntries(Object.entries(Deno.env.toObject()).filter(([key]) => !TUNING.test(`${key}=`))),
        ...box.env(server),
      };
      if (callerValue !== undefined) env.MALLOC_MMAP_THRESHOLD_ = callerValue;
      const output = await new Deno.Command(LAUNCHER, {
        args: ["-p", "go", "--permission-mode", "bypassPermissions"],
        cwd: box.root,
        env,
        clearEnv: true,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      equal(output.code, 0, new TextDecoder().decode(output.stderr));
      if (callerValue === undefined) {
        deepStrictEqual(tuningLines(await Deno.readTextFile(parent)), [
          "MALLOC_ARENA_MAX=2",
          "MALLOC_MMAP_THRESHOLD_=131072",
          "MALLOC_TOP_PAD_=1048576",
          "MEWCODE_LAUNCHER_MALLOC=1",
        ]);
        deepStrictEqual(tuningLines(await Deno.readTextFile(own)), []);
      } else {
        const callers = [`MALLOC_MMAP_THRESHOLD_=${callerValue}`];
        deepStrictEqual(tuningLines(await Deno.readTextFile(parent)), callers);
        deepStrictEqual(tuningLines(await Deno.readTextFile(own)), callers);
      }
    });
  }
});

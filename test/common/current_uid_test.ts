import { equal } from "node:assert/strict";
import { join } from "node:path";

Deno.test("currentUid finds the user id with mewcode's permissions only (no --allow-sys, no /proc/self)", async () => {
  const module = new URL("../../src/common/current_uid.ts", import.meta.url).href;
  const dir = await Deno.makeTempDir({ prefix: "mewcode-uid-" });
  try {
    const script = join(dir, "uid.ts");
    await Deno.writeTextFile(
      script,
      `import { currentUid } from ${JSON.stringify(module)};\n` +
        `let uid = null;\ntry { uid = Deno.uid(); } catch { /* not allowed, as in mewcode */ }\n` +
        `console.log(JSON.stringify({ denied: uid === null, found: currentUid() }));\n`,
    );
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--allow-read", "--allow-write", "--allow-env", script],
      env: { TMPDIR: dir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(output.code, 0, new TextDecoder().decode(output.stderr));
    const { denied, found } = JSON.parse(new TextDecoder().decode(output.stdout));
    equal(denied, true, "Deno.uid() is refused without --allow-sys");
    equal(found, Deno.uid());
    // The probe file is gone.
    equal((await Array.fromAsync(Deno.readDir(dir))).map((entry) => entry.name).join(), "uid.ts");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

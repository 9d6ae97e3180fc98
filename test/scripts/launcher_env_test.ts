/**
 * scripts/mewcode clears every Deno variable it does not know to be harmless, with shell built-ins only, turns
 * off Deno's own update check and fixes glibc's mmap threshold and top pad unless the caller set either:
 * checked with a stand-in Deno (MEWCODE_DENO) that prints the environment it was started with.
 */
import { deepStrictEqual, equal } from "node:assert/strict";
import { join } from "node:path";
import { LAUNCHER } from "../_fakes/run_cli.ts";

/** The environment a stand-in Deno (MEWCODE_DENO) was started with by the launcher run by `shell`, sorted. */
async function environmentSeenByDeno(env: Record<string, string>, shell = "/bin/sh"): Promise<string[]> {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-launcher-env-" });
  try {
    const fake = join(dir, "deno");
    await Deno.writeTextFile(fake, "#!/bin/sh\nenv | sort\n");
    await Deno.chmod(fake, 0o755);
    const output = await new Deno.Command(shell, {
      args: [LAUNCHER, "--version"],
      env: { ...env, MEWCODE_DENO: fake },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    equal(output.code, 0, new TextDecoder().decode(output.stderr));
    return new TextDecoder().decode(output.stdout).split("\n").filter((line) => line !== "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function denoVariablesSeen(env: Record<string, string>, shell: string): Promise<string[]> {
  return (await environmentSeenByDeno(env, shell)).filter((line) => line.startsWith("DENO_"));
}

Deno.test("the launcher passes on only the harmless Deno variables, whatever their values hold", async (t) => {
  const env = {
    PATH: "/usr/bin:/bin",
    DENO_DIR: "/cache/deno",
    DENO_CERT: "/etc/cert.pem",
    DENO_PERMISSION_BROKER_PATH: "/run/broker.sock",
    DENO_AUDIT_PERMISSIONS: "/tmp/audit.log",
    DENO_V8_FLAGS: "--no-enable-experimental-regexp-engine-on-excessive-backtracks",
    // A value that spans lines and looks like another variable's line.
    DENO_TRICK: "x\nexport DENO_DIR='/elsewhere'\ndeclare -x DENO_CERT=y",
    NOT_DENO: "kept",
  };
  for (const shell of ["/bin/sh", "/bin/bash"]) {
    await t.step(shell, async () => {
      deepStrictEqual(await denoVariablesSeen(env, shell), [
        "DENO_CERT=/etc/cert.pem",
        "DENO_DIR=/cache/deno",
        "DENO_NO_UPDATE_CHECK=1",
      ]);
    });
  }
});

Deno.test("the launcher turns Deno's update check off, whatever the caller set", async () => {
  // Unset, Deno looks up dl.deno.land from every run whose last check is a day old, or never succeeded (offline).
  for (const value of [undefined, "", "0"]) {
    const env: Record<string, string> = { PATH: "/usr/bin:/bin" };
    if (value !== undefined) env.DENO_NO_UPDATE_CHECK = value;
    deepStrictEqual(await denoVariablesSeen(env, "/bin/sh"), ["DENO_NO_UPDATE_CHECK=1"]);
  }
});

Deno.test("the launcher runs Deno with core dumps off: a dump would hold the API key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "mewcode-launcher-core-" });
  try {
    const fake = join(dir, "deno");
    await Deno.writeTextFile(fake, "#!/bin/sh\nulimit -c\n");
    await Deno.chmod(fake, 0o755);
    for (const shell of ["/bin/sh", "/bin/bash"]) {
      const output = await new Deno.Command(shell, {
        args: ["-c", 'ulimit -c unlimited; exec "$0" "$@"', LAUNCHER, "--version"],
        env: { PATH: "/usr/bin:/bin", MEWCODE_DENO: fake },
        clearEnv: true,
        stdout: "piped",
        stderr: "piped",
      }).output();
      equal(output.code, 0, new TextDecoder().decode(output.stderr));
      equal(new TextDecoder().decode(output.stdout), "0\n", shell);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the launcher fixes glibc's mmap threshold, top pad and arenas for Deno, unless the caller set any", async () => {
  const tuning = async (env: Record<string, string>) =>
    (await environmentSeenByDeno({ PATH: "/usr/bin:/bin", ...env })).filter((line) =>
      /^(MALLOC_MMAP_THRESHOLD_|MALLOC_TOP_PAD_|MALLOC_ARENA_MAX|MEWCODE_LAUNCHER_MALLOC)=/.test(line)
    );
  deepStrictEqual(await tuning({}), [
    "MALLOC_ARENA_MAX=2",
    "MALLOC_MMAP_THRESHOLD_=131072",
    "MALLOC_TOP_PAD_=1048576",
    "MEWCODE_LAUNCHER_MALLOC=1",
  ]);
  deepStrictEqual(await tuning({ MALLOC_MMAP_THRESHOLD_: "65536" }), ["MALLOC_MMAP_THRESHOLD_=65536"]);
  deepStrictEqual(await tuning({ MALLOC_TOP_PAD_: "0" }), ["MALLOC_TOP_PAD_=0"]);
  deepStrictEqual(await tuning({ MALLOC_ARENA_MAX: "8" }), ["MALLOC_ARENA_MAX=8"]);
  // Set but empty is the caller's choice too.
  deepStrictEqual(await tuning({ MALLOC_MMAP_THRESHOLD_: "" }), ["MALLOC_MMAP_THRESHOLD_="]);
});

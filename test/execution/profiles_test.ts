import { deepEqual, equal, notEqual } from "node:assert/strict";
import {
  alignShellWithRunGrants,
  broaderPermissions,
  PERMISSION_NAMES,
  type PermissionName,
  profileFor,
  profilesForTools,
  shellProgram,
} from "../../src/execution/profiles.ts";
import type { ShellPlan } from "../../src/tools/tool.ts";
import { probeReadOnlyTool, probeShellTool, probeWriterTool } from "../_fakes/sandbox_probes.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

const ROOT = "/ws";

const BWRAP_PLAN: ShellPlan = {
  mode: "workspace-write",
  network: false,
  wrapper: ["bwrap", "--die-with-parent", "--ro-bind", "/", "/"],
  shell: "/bin/bash",
  env: { PATH: "/usr/bin:/bin" },
  unavailable: null,
};

const DIRECT_PLAN: ShellPlan = {
  ...BWRAP_PLAN,
  mode: "danger-full-access",
  wrapper: [],
  shell: "/usr/bin/bash",
};

const NONE = {
  env: false,
  net: false,
  sys: false,
  ffi: false,
  import: false,
  read: false,
  write: false,
  run: false,
};

Deno.test("profileFor gives a read-only tool read access to the root and nothing else", () => {
  const profile = profileFor(probeReadOnlyTool, { root: ROOT, shell: BWRAP_PLAN });
  equal(profile.kind, "read-only");
  deepEqual(profile.permissions, { ...NONE, read: [ROOT] });
});

Deno.test("profileFor gives a non-destructive writer read and write access to the root and nothing else", () => {
  const profile = profileFor(probeWriterTool, { root: ROOT, shell: BWRAP_PLAN });
  equal(profile.kind, "writer");
  deepEqual(profile.permissions, { ...NONE, read: [ROOT], write: [ROOT] });
});

Deno.test("profileFor lets a destructive tool spawn only the sandbox program, with no file access", () => {
  const profile = profileFor(probeShellTool, { root: ROOT, shell: BWRAP_PLAN });
  equal(profile.kind, "shell");
  deepEqual(profile.permissions, { ...NONE, run: ["bwrap"] });
});

Deno.test("profileFor lets a destructive tool spawn the shell itself in danger-full-access", () => {
  const profile = profileFor(probeShellTool, { root: ROOT, shell: DIRECT_PLAN });
  deepEqual(profile.permissions, { ...NONE, run: ["/usr/bin/bash"] });
});

Deno.test("profileFor grants a destructive tool nothing when the shell plan is unavailable", () => {
  const plan = { ...BWRAP_PLAN, unavailable: "bubblewrap is not installed" };
  deepEqual(profileFor(probeShellTool, { root: ROOT, shell: plan }).permissions, NONE);
  equal(shellProgram(plan), null);
});

Deno.test("profileFor spells out every permission key and never inherits or fully grants one", () => {
  for (const tool of [probeReadOnlyTool, probeWriterTool, probeShellTool]) {
    for (const shell of [BWRAP_PLAN, DIRECT_PLAN]) {
      const { permissions } = profileFor(tool, { root: ROOT, shell });
      deepEqual(Object.keys(permissions).sort(), [...PERMISSION_NAMES].sort());
      for (const name of PERMISSION_NAMES) {
        const value: unknown = permissions[name];
        equal(value === false || (Array.isArray(value) && value.length === 1), true, `${tool.name} ${name}`);
      }
    }
  }
});

Deno.test("profile keys are equal exactly when the permissions are equal", () => {
  const key = (tool = probeReadOnlyTool, root = ROOT, shell = BWRAP_PLAN) =>
    profileFor(tool, { root, shell }).key;
  equal(key(), key(probeReadOnlyTool, ROOT, DIRECT_PLAN));
  notEqual(key(), key(probeReadOnlyTool, "/other"));
  notEqual(key(), key(probeWriterTool));
  notEqual(key(probeShellTool), key(probeShellTool, ROOT, DIRECT_PLAN));
});

Deno.test("profilesForTools returns one profile per class of tool, in first-seen order", () => {
  const profiles = profilesForTools(
    [probeReadOnlyTool, probeWriterTool, probeReadOnlyTool, probeShellTool, probeWriterTool],
    { root: ROOT, shell: BWRAP_PLAN },
  );
  deepEqual(profiles.map((profile) => profile.kind), ["read-only", "writer", "shell"]);
});

Deno.test("broaderPermissions names every permission a worker reports as fully granted", () => {
  const states: Record<PermissionName, Deno.PermissionState> = {
    env: "prompt",
    net: "prompt",
    sys: "prompt",
    ffi: "prompt",
    import: "prompt",
    read: "prompt",
    write: "prompt",
    run: "prompt",
  };
  deepEqual(broaderPermissions({ ...states }), []);
  deepEqual(broaderPermissions({ ...states, read: "granted", env: "granted" }), ["env", "read"]);
  deepEqual(broaderPermissions({ ...states, net: "denied" }), []);
});

Deno.test("alignShellWithRunGrants names an unwrapped shell by its first match on PATH when it is the same file", async (t) => {
  await using workspace = await createTempWorkspace();
  const real = `${workspace.root}/usr/bin`;
  await Deno.mkdir(real, { recursive: true });
  await Deno.writeTextFile(`${real}/bash`, "#!/bin/sh\n");
  await Deno.symlink(real, `${workspace.root}/bin`);
  const other = `${workspace.root}/other`;
  await Deno.mkdir(other);
  await Deno.writeTextFile(`${other}/bash`, "#!/bin/sh\n");
  const plan: ShellPlan = { ...DIRECT_PLAN, shell: `${workspace.root}/bin/bash` };
  await t.step("the first match is the same file under another name: use that name", async () => {
    const aligned = await alignShellWithRunGrants(plan, { PATH: `relative:${workspace.root}/none:${real}` });
    equal(aligned.shell, `${real}/bash`);
  });
  await t.step("the first match is another bash: keep the plan's own", async () => {
    deepEqual(await alignShellWithRunGrants(plan, { PATH: `${other}:${real}` }), plan);
  });
  await t.step("no match on PATH, or a plan with a wrapper: unchanged", async () => {
    deepEqual(await alignShellWithRunGrants(plan, { PATH: `${workspace.root}/none` }), plan);
    deepEqual(await alignShellWithRunGrants(plan, {}), plan);
    const wrapped = { ...plan, wrapper: ["bwrap"] };
    deepEqual(await alignShellWithRunGrants(wrapped, { PATH: real }), wrapped);
  });
});

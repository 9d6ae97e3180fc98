import { deepEqual, equal, notEqual } from "node:assert/strict";
import {
  broaderPermissions,
  profileFor,
  profilesForTools,
  shellProgram,
} from "../../src/execution/profiles.ts";
import type { ShellPlan } from "../../src/tools/tool.ts";
import { PERMISSION_NAMES, type PermissionName } from "../../src/tools/worker_protocol.ts";
import { probeReadOnlyTool, probeShellTool, probeWriterTool } from "../_fakes/sandbox_probes.ts";

const ROOT = "/ws";

const BWRAP_PLAN: ShellPlan = {
  mode: "workspace-write",
  network: false,
  wrapper: ["bwrap", "--die-with-parent", "--ro-bind", "/", "/"],
  shell: "/bin/bash",
  env: { PATH: "/usr/bin:/bin" },
  prologue: [],
  seccomp: null,
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

Deno.test("profileFor grants the folders added to the workspace exactly like the root, in their own profiles", () => {
  const options = { root: ROOT, additionalRoots: ["/srv/lib", "/opt/data"], shell: BWRAP_PLAN };
  const folders = [ROOT, "/srv/lib", "/opt/data"];
  deepEqual(profileFor(probeReadOnlyTool, options).permissions, { ...NONE, read: folders });
  deepEqual(profileFor(probeWriterTool, options).permissions, { ...NONE, read: folders, write: folders });
  deepEqual(profileFor(probeShellTool, options).permissions, { ...NONE, run: ["bwrap"] });
  // Workers are pooled by key: one granted the added folders is never reused for a session without them.
  notEqual(
    profileFor(probeReadOnlyTool, options).key,
    profileFor(probeReadOnlyTool, { root: ROOT, shell: BWRAP_PLAN }).key,
  );
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

/**
 * A one-shot session's permission side starts without its protected paths (the tool runtime gathers them
 * as it is built, after the first request): until they come, it refuses to decide rather than decide without
 * them.
 */
import { equal, notEqual, rejects } from "node:assert/strict";
import { join } from "node:path";
import { SessionPermissions } from "../../src/session/session_permissions.ts";
import { PROTECTED_PATHS } from "../../src/tools/protected_paths.ts";
import { writeFileTool } from "../../src/tools/write_file.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";

Deno.test("SessionPermissions decides nothing before its protected paths are known, then asks about them", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.mkdir(join(workspace.root, ".git"));
  const permissions = await SessionPermissions.open({
    mode: "acceptEdits",
    rules: [],
    root: workspace.root,
    rootAliases: [],
    additionalDirectories: [],
    protectedPaths: null,
    env: { HOME: workspace.root },
    hooks: null,
    approver: null,
    approvalCommand: null,
    session: () => ({ sessionId: "s", transcriptPath: null }),
    sandbox: () => null,
  });
  const write = (path: string) =>
    permissions.policy.decide({
      tool: writeFileTool,
      input: { path: join(workspace.root, path), content: "x" },
      callId: "c",
    });
  await rejects(
    write(".git/config"),
    /No permission decision before the session's protected paths are known/,
  );

  permissions.useProtections(PROTECTED_PATHS);
  notEqual((await write(".git/config")).behavior, "allow", ".git is protected");
  equal((await write("notes.md")).behavior, "allow", "acceptEdits allows other writes");
});

/**
 * How a session starts when its transcript cannot be kept safely: it does not start, and it says which
 * path to fix; nothing is written elsewhere and nothing it started is left running.
 */
import { deepStrictEqual, rejects } from "node:assert/strict";
import { join } from "node:path";
import { openSession } from "../../src/session/session.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { testSessionOptions } from "../_fakes/session_options.ts";

Deno.test("openSession does not start, and names the link to remove, when the projects folder is a link", async () => {
  await using workspace = await createTempWorkspace();
  await using outside = await createTempWorkspace("mewcode-outside-");
  const home = join(workspace.root, ".home");
  await Deno.mkdir(home);
  await Deno.symlink(outside.root, join(home, "projects"));
  await rejects(
    openSession(testSessionOptions(workspace.root, { MEWCODE_HOME: home, HOME: home })),
    {
      message: new RegExp(`^Cannot keep the session transcript at "${home}/projects": it is a symbolic link`),
    },
  );
  deepStrictEqual(await Array.fromAsync(Deno.readDir(outside.root)), []);
});

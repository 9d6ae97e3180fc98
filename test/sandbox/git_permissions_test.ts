/**
 * A command that makes git metadata writable by other users (`chmod 777 .git`) is reported at the session's
 * end: through a world-writable `.git`, any local user can later swap its hooks folder or config for ones
 * that run when the user's git does. A mode the metadata had before the session (a repository shared with
 * its group) is not reported again.
 */
import { deepStrictEqual, equal, ok } from "node:assert/strict";
import { join } from "node:path";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { createRepository } from "./_git_fixture.ts";
import { openSandbox, outputOf, runIn } from "./_sandbox.ts";

Deno.test("Git metadata a command made writable by others is reported at the session's end", async () => {
  await using workspace = await createTempWorkspace();
  await createRepository(workspace.root);
  await Deno.mkdir(join(workspace.root, "nested"));
  await createRepository(join(workspace.root, "nested"));
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const { result } = await runIn(
    sandbox,
    "chmod 777 .git .git/objects && chmod g+w nested/.git; chmod o+w .git/hooks .git/config 2>/dev/null; " +
      "echo done",
  );
  equal(outputOf(result), "done", result.content);
  const lines = await sandbox.endOfSession();
  const about = (path: string) => lines.filter((line) => line.startsWith(`${path} is writable by`));
  equal(about(".git").length, 1, lines.join("\n"));
  ok(about(".git")[0]!.includes("other users"), about(".git")[0]);
  ok(about(".git")[0]!.includes("chmod go-w"), about(".git")[0]);
  // Another user could put objects there that git checks out.
  equal(about(".git/objects").length, 1, lines.join("\n"));
  equal(about("nested/.git").length, 1, lines.join("\n"));
  ok(about("nested/.git")[0]!.includes("its group"), about("nested/.git")[0]);
  // Read-only in the sandbox, so the command could not change them.
  deepStrictEqual([...about(".git/hooks"), ...about(".git/config")], []);
  equal((await Deno.stat(join(workspace.root, ".git/hooks"))).mode! & 0o022, 0);
});

Deno.test("Git metadata writable by its group before the session is not reported again", async () => {
  await using workspace = await createTempWorkspace();
  await createRepository(workspace.root);
  await Deno.chmod(join(workspace.root, ".git"), 0o775);
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const { result } = await runIn(sandbox, "git status --short >/dev/null; echo done");
  equal(outputOf(result), "done", result.content);
  deepStrictEqual(await sandbox.endOfSession(), []);
  // Made writable by everyone since: reported.
  await using again = await openSandbox(workspace.root, "workspace-write");
  await runIn(again, "chmod o+w .git");
  const lines = await again.endOfSession();
  equal(lines.filter((line) => line.startsWith(".git is writable by")).length, 1, lines.join("\n"));
});

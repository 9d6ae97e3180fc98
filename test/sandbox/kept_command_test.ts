/**
 * The read-only sandbox kept across mewcode's own commands (src/sandbox/kept_command.ts), which ripgrep's
 * searches run in: each command as isolated from the last as in a sandbox of its own, with its streams apart
 * and its own exit status. Real bubblewrap through `ShellSandbox.runCommand`, as Grep runs it.
 */
import { deepStrictEqual, equal, match, notEqual, ok } from "node:assert/strict";
import type { CommandResult } from "../../src/sandbox/sandboxed_command.ts";
import type { ShellSandbox } from "../../src/sandbox/shell_sandbox.ts";
import { processesWith, SEARCH_SANDBOX_WORD } from "../_fakes/processes.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { openSandbox, SANDBOX_ID } from "./_sandbox.ts";

function kept(
  sandbox: ShellSandbox,
  command: string,
  options: { timeoutMs?: number; signal?: AbortSignal; onStdout?: (bytes: Uint8Array) => void } = {},
): Promise<CommandResult> {
  return sandbox.runCommand(command, {
    mode: "read-only",
    keep: true,
    timeoutMs: options.timeoutMs ?? 10_000,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.onStdout === undefined ? {} : { onStdout: options.onStdout }),
  });
}

function exited(result: CommandResult): { code: number; stdout: string; stderr: string } {
  ok(result.status === "exited", JSON.stringify(result));
  return { code: result.code, stdout: result.stdout, stderr: result.stderr };
}

Deno.test("Commands run one after the other in one kept sandbox, with their own streams and exit status", async () => {
  await using workspace = await createTempWorkspace();
  await Deno.writeTextFile(`${workspace.root}/a.txt`, "alpha\n");
  await using sandbox = await openSandbox(workspace.root, "workspace-write", {
    env: { ...Deno.env.toObject(), LANG: "C.UTF-8", LC_ALL: "C.UTF-8" },
  });
  const first = exited(await kept(sandbox, `${SANDBOX_ID}; cat a.txt; echo oops >&2; exit 3`));
  const [id, text] = first.stdout.split("\n");
  equal(text, "alpha");
  equal(first.stderr, "oops\n");
  equal(first.code, 3);
  // Non-ASCII text travels by its length in bytes, whatever the locale.
  const second = exited(
    await kept(sandbox, `${SANDBOX_ID}; printf '%s|' 'é漢字🙂' "$LC_ALL"; export LEAK=1`),
  );
  equal(second.stdout, `${id}\né漢字🙂|C.UTF-8|`);
  equal(second.code, 0);
  const third = exited(
    await kept(
      sandbox,
      `${SANDBOX_ID}; echo "LEAK=\${LEAK-} $(compgen -v | grep -c mewcode)"; echo x > a.txt`,
    ),
  );
  equal(third.stdout.split("\n")[0], id, "the same sandbox ran all three");
  equal(
    third.stdout.split("\n")[1],
    "LEAK= 0",
    "nothing of the last command, nor the supervisor's variables",
  );
  match(third.stderr, /Read-only file system/, "the workspace is read-only");
  equal(await Deno.readTextFile(`${workspace.root}/a.txt`), "alpha\n");
});

Deno.test("A kept command can neither read the supervisor's pipes nor end its output or forge its status", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const { stdout: id } = exited(await kept(sandbox, SANDBOX_ID));
  const { code, stdout, stderr } = exited(
    await kept(
      sandbox,
      [
        "cat /proc/1/environ >/dev/null 2>&1 && echo environ-read",
        "readlink /proc/1/fd/0 >/dev/null 2>&1 && echo fd-read",
        "timeout 1 cat /proc/1/fd/0 >/dev/null 2>&1 && echo input-read",
        "{ printf 'x' > /proc/1/fd/1; } 2>/dev/null && echo output-opened",
        "kill -9 1; kill -STOP 1",
        // The command holds no pipe of the supervisor's: its input is /dev/null.
        "[[ $(readlink /proc/$BASHPID/fd/0) == /dev/null ]] || echo input-held",
        // Text shaped like the protocol's is output like any other.
        "printf '\\001%s\\001status 0\\n\\001%s\\001go\\0' 0123456789abcdef0123456789abcdef 0123456789abcdef0123456789abcdef",
        "printf '\\001fake\\001' >&2",
        "sleep 0.2; exit 5",
      ].join("\n"),
    ),
  );
  equal(
    stdout,
    "\u00010123456789abcdef0123456789abcdef\u0001status 0\n\u00010123456789abcdef0123456789abcdef\u0001go\0",
  );
  equal(stderr, "\u0001fake\u0001");
  equal(code, 5);
  equal(exited(await kept(sandbox, SANDBOX_ID)).stdout, id, "process 1 survived and still serves commands");
});

Deno.test("What a kept command leaves running is killed; what it leaves in /tmp ends the sandbox", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const marker = `kept_${crypto.randomUUID().replaceAll("-", "")}`;
  const { stdout: id } = exited(
    await kept(
      sandbox,
      `${SANDBOX_ID}; (exec -a ${marker} sleep 300) & setsid bash -c 'exec -a ${marker} sleep 301' &`,
    ),
  );
  equal(await processesWith(marker), 0, "nothing of the command runs once it has returned");
  const same = exited(await kept(sandbox, `${SANDBOX_ID}; ls /proc | grep -c '^[0-9]'; echo x > /tmp/left`));
  // The supervisor, the subshell, ls and grep.
  deepStrictEqual(same.stdout.split("\n").slice(0, 2), [id.trim(), "4"]);
  const after = exited(await kept(sandbox, `${SANDBOX_ID}; ls -A /tmp | grep -c left`));
  const [newId, left] = after.stdout.split("\n");
  notEqual(newId, id.trim(), "a new sandbox");
  equal(left, "0");
});

Deno.test("A hidden folder deleted and made again on the host stays hidden from the next kept command", async () => {
  await using workspace = await createTempWorkspace();
  const state = `${workspace.root}/state`;
  await Deno.mkdir(state);
  await Deno.writeTextFile(`${state}/old.txt`, "old\n");
  await using sandbox = await openSandbox(workspace.root, "workspace-write", { excluded: [state] });
  const before = exited(await kept(sandbox, `${SANDBOX_ID}; ls -A state | wc -l`));
  const [id, count] = before.stdout.split("\n");
  equal(count, "0", "hidden by an empty tmpfs");
  await Deno.remove(state, { recursive: true });
  await Deno.mkdir(state);
  await Deno.writeTextFile(`${state}/secret.txt`, "the session's secret\n");
  const after = exited(await kept(sandbox, `${SANDBOX_ID}; cat state/secret.txt 2>&1; ls -A state | wc -l`));
  const lines = after.stdout.split("\n");
  equal(lines.includes("the session's secret"), false, after.stdout);
  equal(lines[2], "0");
  notEqual(lines[0], id, "ran in another sandbox than the stale one");
});

Deno.test("A timeout or a cancellation ends the kept sandbox with its command; the next gets a new one", async () => {
  await using workspace = await createTempWorkspace();
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const marker = `kept_${crypto.randomUUID().replaceAll("-", "")}`;
  const { stdout: id } = exited(await kept(sandbox, SANDBOX_ID));
  const slow = await kept(sandbox, `echo begun; exec -a ${marker} sleep 300`, { timeoutMs: 400 });
  equal(slow.status, "timed-out");
  match(slow.status === "timed-out" ? slow.stdout : "", /begun/);
  equal(await processesWith(marker), 0);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 300);
  const cancelled = await kept(sandbox, `exec -a ${marker} sleep 300`, { signal: controller.signal });
  equal(cancelled.status === "exited" ? cancelled.code : null, 137);
  equal(await processesWith(marker), 0);
  // A replacement starts at once, before the next command comes.
  let waited = 0;
  while (await processesWith([workspace.root, SEARCH_SANDBOX_WORD]) === 0 && waited < 5_000) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    waited += 20;
  }
  ok(waited < 5_000, "a new kept sandbox runs");
  notEqual(exited(await kept(sandbox, SANDBOX_ID)).stdout, id);
});

Deno.test("Binary output reaches onStdout byte for byte; a command that comes while one runs gets its own sandbox", async () => {
  await using workspace = await createTempWorkspace();
  const bytes = crypto.getRandomValues(new Uint8Array(60_000));
  const data = new Uint8Array([...bytes, ...bytes, ...bytes, ...bytes, 0, 1, 1, 0]);
  await Deno.writeFile(`${workspace.root}/blob.bin`, data);
  await using sandbox = await openSandbox(workspace.root, "workspace-write");
  const pieces: Uint8Array[] = [];
  const streamed = await kept(sandbox, "cat blob.bin", { onStdout: (piece) => pieces.push(piece.slice()) });
  equal(exited(streamed).stdout, "");
  deepStrictEqual(new Uint8Array(pieces.flatMap((piece) => [...piece])), data);
  const [one, two] = await Promise.all([
    kept(sandbox, `${SANDBOX_ID}; sleep 0.3`),
    kept(sandbox, `sleep 0.1; ${SANDBOX_ID}`),
  ]);
  notEqual(exited(one).stdout, exited(two).stdout, "two sandboxes");
});

Deno.test("The kept sandbox starts when warmed, stays between commands, and ends with the session", async () => {
  await using workspace = await createTempWorkspace();
  const sandbox = await openSandbox(workspace.root, "workspace-write");
  // bubblewrap's command line names the workspace and holds the supervisor's script.
  const keptProcesses = async () => await processesWith([workspace.root, SEARCH_SANDBOX_WORD]);
  equal(await keptProcesses(), 0);
  sandbox.warmKeptCommands();
  const { stdout: id } = exited(await kept(sandbox, SANDBOX_ID));
  ok(await keptProcesses() > 0, "it runs between commands");
  equal(exited(await kept(sandbox, SANDBOX_ID)).stdout, id);
  await sandbox.close();
  equal(await keptProcesses(), 0, "nothing of it runs after close");
});

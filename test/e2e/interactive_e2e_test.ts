/**
 * End to end: the interactive session, driven through tmux (a real pseudo-terminal) running the shipped
 * launcher against the fake Anthropic server.
 */
import { equal, match, ok } from "node:assert/strict";
import { join } from "node:path";
import { type FakeAnthropic, startFakeAnthropic, turn } from "../fake_anthropic/server.ts";
import { E2eWorkspace } from "../_fakes/e2e_workspace.ts";
import { LAUNCHER } from "../_fakes/run_cli.ts";
import { TmuxSession } from "../_fakes/tmux.ts";
import { processesWith } from "../_fakes/processes.ts";
import { waitFor } from "../_fakes/wait_for.ts";

/** Starts `mewcode ARGS` in tmux in the workspace, against the server. */
async function startSession(box: E2eWorkspace, server: FakeAnthropic, args = ""): Promise<TmuxSession> {
  return await TmuxSession.start({
    command: `${LAUNCHER} ${args}`,
    cwd: box.root,
    env: { ...box.env(server), TERM: "xterm-256color", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
}

/** Sends a prompt at the session's prompt and waits until a process with `marker` in its command line runs. */
async function sendAndWaitForCommand(tmux: TmuxSession, prompt: string, marker: string): Promise<void> {
  await tmux.waitFor(/^›/m);
  await tmux.type(prompt);
  await tmux.keys("Enter");
  const deadline = Date.now() + 30_000;
  while ((await processesWith(marker)) === 0) {
    ok(Date.now() < deadline, "the command never started");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The messages of the server's request `number` (1-based). */
function messagesOf(
  server: FakeAnthropic,
  number: number,
): { role: string; content: { type: string; text?: string; content?: unknown; is_error?: boolean }[] }[] {
  return (server.requests[number - 1]?.body as { messages: never[] }).messages;
}

Deno.test("interactive: a streamed Markdown answer renders its list, code block and table", async () => {
  await using box = await E2eWorkspace.create();
  const answer =
    "## Steps\n\n- first **bold** item\n- second `code` item\n\n```ts\nconst answer: number = 42;\n```\n\n" +
    "| name | value |\n|------|-------|\n| alpha | 1 |\n| beta | 22 |\n\nDone.\n";
  await using server = await startFakeAnthropic([turn().text(answer, { chunk: 5 }).stop("end_turn")]);
  await using tmux = await startSession(box, server);
  await tmux.waitFor(/^›/m);
  await tmux.type("explain");
  await tmux.keys("Enter");
  const screen = await tmux.waitFor(/Done\./);
  match(screen, /Steps/);
  match(screen, /• first bold item/);
  match(screen, /• second code item/);
  match(screen, /const answer: number = 42;/);
  match(screen, /name\s+│ value/);
  match(screen, /beta\s+│ 22/);
  ok(!screen.includes("**"), "emphasis markers are rendered, not shown");
  ok(!screen.includes("```"), "fences are rendered, not shown");
  // The footer shows the usage and the cost.
  await tmux.waitFor(/claude-sonnet-5-5 · default · sandbox workspace-write · \d+ in \/ \d+ out · \$/);
  const coloured = await tmux.screenWithColours();
  ok(coloured.includes("\x1b["), "colours reach the terminal");
});

Deno.test("interactive: an answer cut off by a full context window ends marked as cut off, with what to do", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("The answer is").stop("model_context_window_exceeded"),
  ]);
  await using tmux = await startSession(box, server);
  await tmux.waitFor(/^›/m);
  await tmux.type("explain");
  await tmux.keys("Enter");
  const screen = await tmux.waitFor(/⊘ The response was cut off/);
  match(screen, /The answer is/);
  match(
    screen.replaceAll(/\s+/g, " "),
    /⊘ The response was cut off: the conversation filled the model's context window/,
  );
});

Deno.test("interactive: an edit asks with its diff; 'don't ask again' saves the rule; 'No' sends the reason", async () => {
  await using box = await E2eWorkspace.create();
  const file = await box.write("notes.txt", "one\ntwo\nthree\n");
  const edit = (from: string, to: string) =>
    turn().toolUse("EditFile", { path: file, old_string: from, new_string: to });
  await using server = await startFakeAnthropic([
    turn().toolUse("ReadFile", { path: file }),
    edit("one", "uno"),
    turn().text("Changed one.").stop("end_turn"),
    edit("two", "dos"),
    turn().text("Changed two.").stop("end_turn"),
    turn().toolUse("WriteFile", { path: box.path("other.txt"), content: "x\n" }),
    turn().text("Understood.").stop("end_turn"),
  ]);
  await using tmux = await startSession(box, server);
  await tmux.waitFor(/^›/m);
  await tmux.type("change one");
  await tmux.keys("Enter");
  const question = await tmux.waitFor(/Yes, and don't ask again for EditFile\(notes\.txt\) in this project/);
  match(question, /EditFile needs your approval/);
  match(question, /1 - one/);
  match(question, /1 \+ uno/);
  await tmux.keys("2");
  await tmux.waitFor(/Changed one\./);
  equal(await Deno.readTextFile(file), "uno\ntwo\nthree\n");
  const local = JSON.parse(await Deno.readTextFile(box.path(".mewcode/settings.local.json")));
  equal(local.permissions.allow[0], "EditFile(notes.txt)");

  // The same kind of call does not ask again.
  await tmux.type("change two");
  await tmux.keys("Enter");
  const second = await tmux.waitFor(/Changed two\./);
  equal((second.match(/needs your approval/g) ?? []).length, 1, second);
  equal(await Deno.readTextFile(file), "uno\ndos\nthree\n");

  // "No, and tell mewcode what to do instead": the text reaches the model as the denial.
  await tmux.type("write another");
  await tmux.keys("Enter");
  await tmux.waitFor(/WriteFile needs your approval/);
  await tmux.keys("3");
  await tmux.waitFor(/What should mewcode do instead\?/);
  await tmux.type("put it in notes.txt instead");
  await tmux.keys("Enter");
  await tmux.waitFor(/Understood\./);
  const denial = messagesOf(server, 7).at(-1)!.content.find((block) => block.type === "tool_result");
  equal(denial?.is_error, true);
  match(String(denial?.content), /put it in notes\.txt instead/);
  equal(await Deno.stat(box.path("other.txt")).catch(() => null), null);
});

Deno.test("interactive: Esc during a long Bash call cancels it within 1 s, kills its processes, and the next prompt works", async () => {
  await using box = await E2eWorkspace.create();
  const marker = `400.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  await using server = await startFakeAnthropic([
    turn().toolUse("Bash", { command: `sleep ${marker}` }),
    turn().text("After the interrupt.").stop("end_turn"),
  ]);
  await using tmux = await startSession(box, server, "--permission-mode bypassPermissions");
  await sendAndWaitForCommand(tmux, "wait", marker);
  const pressed = Date.now();
  await tmux.keys("Escape");
  await tmux.waitFor(/interrupted/, 5_000);
  while ((await processesWith(marker)) > 0) {
    ok(Date.now() - pressed < 1_000, "the command's processes were gone within 1 s");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const last = messagesOf(server, 1);
  ok(last.length > 0);
  await tmux.waitFor(/^›\s*$/m);
  await tmux.type("go on");
  await tmux.keys("Enter");
  await tmux.waitFor(/After the interrupt\./);
  // The cancelled call was answered in the conversation sent next.
  const results = messagesOf(server, 2).flatMap((message) => message.content).filter((block) =>
    block.type === "tool_result"
  );
  equal(results.length, 1);
  equal(results[0]?.is_error, true);
});

Deno.test("interactive: a closed terminal (SIGHUP) during a Bash call ends the session, its processes and its temporary files", async () => {
  await using box = await E2eWorkspace.create();
  // The run's own temporary folder, to see what it leaves there (the kept sandbox's files).
  const temporary = await Deno.makeTempDir({ prefix: "mewcode-e2e-hup-tmp-" });
  try {
    const marker = `500.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
    const sessionId = crypto.randomUUID();
    await using server = await startFakeAnthropic([turn().toolUse("Bash", { command: `sleep ${marker}` })]);
    await using tmux = await TmuxSession.start({
      command: `${LAUNCHER} --permission-mode bypassPermissions --session-id ${sessionId}`,
      cwd: box.root,
      env: {
        ...box.env(server),
        TERM: "xterm-256color",
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        TMPDIR: temporary,
      },
    });
    await sendAndWaitForCommand(tmux, "wait", marker);
    ok((await Array.fromAsync(Deno.readDir(temporary))).length > 0, "the sandbox keeps its files there");
    const hungUp = Date.now();
    await tmux.hangUp();
    // mewcode's own process carries the session id in its command line.
    while ((await processesWith(marker)) + (await processesWith(sessionId)) > 0) {
      ok(Date.now() - hungUp < 5_000, "mewcode and the command were still running 5 s after the hang-up");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    equal(
      (await Array.fromAsync(Deno.readDir(temporary))).length,
      0,
      "the temporary folder is left as it was",
    );
  } finally {
    await Deno.remove(temporary, { recursive: true });
  }
});

Deno.test("interactive: Ctrl-C twice on an empty prompt exits and the terminal is restored", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([]);
  const before = join(box.home, "stty-before");
  const after = join(box.home, "stty-after");
  await using tmux = await TmuxSession.start({
    command:
      `sh -c 'stty -a > ${before}; ${LAUNCHER}; echo "exit $?" > ${box.home}/status; stty -a > ${after}'`,
    cwd: box.root,
    env: { ...box.env(server), TERM: "xterm-256color", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
  });
  await tmux.waitFor(/^›/m);
  await tmux.keys("C-c");
  await tmux.waitFor(/press Ctrl-C again to exit/);
  await tmux.keys("C-c");
  await tmux.waitForExit();
  equal((await Deno.readTextFile(join(box.home, "status"))).trim(), "exit 0");
  equal(await Deno.readTextFile(after), await Deno.readTextFile(before));
});

Deno.test("interactive: -c restores the last session's messages; a torn transcript resumes with a notice", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("The answer is 42.").stop("end_turn"),
    turn().text("You asked about the answer.").stop("end_turn"),
  ]);
  const first = await box.exec(server, ["-p", "what is the answer?"]);
  equal(first.code, 0, first.stderr);
  const { path } = await box.transcript();
  // A crash while writing: the last line is cut in half.
  await Deno.writeTextFile(path, '{"type":"warning","message":"cut', { append: true });
  await using tmux = await startSession(box, server, "-c");
  const opened = await tmux.waitFor(/^›/m);
  match(opened, /resumed/);
  match(opened, /last line was cut off/);
  await tmux.type("what did I ask?");
  await tmux.keys("Enter");
  await tmux.waitFor(/You asked about the answer\./);
  const texts = messagesOf(server, 2).map((message) =>
    message.content.map((block) => block.text ?? "").join("")
  );
  equal(texts[0], "what is the answer?");
  equal(texts[1], "The answer is 42.");
  equal(texts[2], "what did I ask?");
});

Deno.test("interactive: /compact shortens the next request, keeps every tool_use paired, and the session goes on", async () => {
  await using box = await E2eWorkspace.create();
  const file = await box.write("a.txt", "alpha\n");
  await using server = await startFakeAnthropic([
    turn().toolUse("ReadFile", { path: file }),
    turn().text("It says alpha.").stop("end_turn"),
    turn().toolUse("ReadFile", { path: file }),
    turn().text("Still alpha.").stop("end_turn"),
    turn().text("Summary: the user read a.txt twice; it says alpha.").stop("end_turn"),
    turn().text("Yes, alpha.").stop("end_turn"),
  ]);
  await using tmux = await startSession(box, server);
  await tmux.waitFor(/^›/m);
  for (const [prompt, answer] of [["read it", "It says alpha."], ["again", "Still alpha."]]) {
    await tmux.type(prompt!);
    await tmux.keys("Enter");
    await tmux.waitFor(new RegExp(answer!.replace(".", "\\.")));
  }
  await tmux.type("/compact");
  await tmux.keys("Enter");
  await tmux.waitFor(/compacted \d+ earlier messages/);
  await tmux.type("is it alpha?");
  await tmux.keys("Enter");
  await tmux.waitFor(/Yes, alpha\./);
  const before = messagesOf(server, 4).length;
  const after = messagesOf(server, 6);
  ok(after.length < before + 2, `${after.length} messages after compaction, ${before} before`);
  match(after[0]!.content.map((block) => block.text ?? "").join(""), /Summary of the earlier conversation/);
  // The fake server checks that every tool_use has its tool_result; it answered, so the history is valid.
  equal(server.requests.length, 6);
});

/** Starts an interactive bash with job control in tmux, as a user's terminal has, and mewcode as its job. */
async function startUnderShell(
  box: E2eWorkspace,
  server: FakeAnthropic,
  args = "",
  ready = /^›/m,
): Promise<TmuxSession> {
  const tmux = await TmuxSession.start({
    command: "bash --norc --noprofile -i",
    cwd: box.root,
    env: {
      ...box.env(server),
      TERM: "xterm-256color",
      PS1: "shell$ ",
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    },
  });
  await tmux.waitFor(/^shell\$/m);
  await tmux.type(`${LAUNCHER} ${args}`);
  await tmux.keys("Enter");
  await tmux.waitFor(ready);
  return tmux;
}

Deno.test("interactive: Ctrl-Z hands the terminal back to the shell, `fg` brings the prompt back as it was", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([turn().text("Got it.").stop("end_turn")]);
  await using tmux = await startUnderShell(box, server);
  await tmux.type("half typed");
  await tmux.keys("C-z");
  await tmux.waitFor(/^\[1\]\+\s+Stopped/m);
  // The shell has the terminal: its own input is echoed and runs.
  await tmux.type("echo shell-is-$((40 + 2))");
  await tmux.keys("Enter");
  await tmux.waitFor(/^shell-is-42$/m);
  await tmux.type("fg");
  await tmux.keys("Enter");
  // The prompt is drawn again with what was typed, below the shell's lines, and takes more.
  await tmux.waitFor(/^shell-is-42\n(?:.*\n)*› half typed\s*$/m);
  await tmux.type(" then more");
  await tmux.keys("Enter");
  await tmux.waitFor(/Got it\./);
  const sent = messagesOf(server, 1).at(-1)?.content.find((block) => block.type === "text")?.text;
  equal(sent, "half typed then more");
});

Deno.test("interactive: Ctrl-Z during a turn stops mewcode; after `fg` the turn goes on and its status line is back", async () => {
  await using box = await E2eWorkspace.create();
  const marker = `1.${crypto.getRandomValues(new Uint32Array(1))[0]}`;
  await using server = await startFakeAnthropic([
    turn().toolUse("Bash", { command: `sleep ${marker}; echo slept` }),
    turn().text("Done after the stop.").stop("end_turn"),
  ]);
  await using tmux = await startUnderShell(box, server, "--permission-mode bypassPermissions");
  await tmux.type("wait");
  await tmux.keys("Enter");
  const deadline = Date.now() + 30_000;
  while ((await processesWith(marker)) === 0) {
    ok(Date.now() < deadline, "the command never started");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await tmux.keys("C-z");
  const stopped = await tmux.waitFor(/^\[1\]\+\s+Stopped/m);
  ok(!/Bash/.test(stopped.split("\n").find((line) => line.includes("Stopped")) ?? ""), "no status line left");
  await tmux.type("fg");
  await tmux.keys("Enter");
  await tmux.waitFor(/Done after the stop\./);
  const results = messagesOf(server, 2).flatMap((message) => message.content).filter((block) =>
    block.type === "tool_result"
  );
  equal(results.length, 1);
  match(JSON.stringify(results[0]?.content), /slept/);
  await tmux.waitFor(/^›\s*$/m);
});

Deno.test("interactive: Ctrl-Z without a job-control shell says it cannot stop, and the prompt goes on", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([turn().text("Still here.").stop("end_turn")]);
  // Started by sh -c in the pane: no shell waits for mewcode's process group, so SIGTSTP is discarded.
  await using tmux = await startSession(box, server);
  await tmux.waitFor(/^›/m);
  await tmux.type("abc");
  await tmux.keys("C-z");
  await tmux.waitFor(/no shell with job control runs mewcode here/);
  await tmux.waitFor(/^› abc\s*$/m);
  await tmux.type("d");
  await tmux.keys("Enter");
  await tmux.waitFor(/Still here\./);
  const sent = messagesOf(server, 1).at(-1)?.content.find((block) => block.type === "text")?.text;
  equal(sent, "abcd");
});

Deno.test("interactive: Ctrl-Z at an approval question; after `fg` the options are drawn again and answer", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().toolUse("WriteFile", { path: box.path("new.txt"), content: "x\n" }),
    turn().text("Written.").stop("end_turn"),
  ]);
  await using tmux = await startUnderShell(box, server);
  await tmux.type("write it");
  await tmux.keys("Enter");
  await tmux.waitFor(/WriteFile needs your approval/);
  await tmux.keys("Down");
  await tmux.keys("C-z");
  await tmux.waitFor(/^\[1\]\+\s+Stopped/m);
  await tmux.type("fg");
  await tmux.keys("Enter");
  // Below the shell's lines, the options again, the one chosen before still chosen.
  const redrawn = await tmux.waitFor(/^shell\$ fg\n.*mewcode.*\n {2}1\. Yes\n❯ 2\./m);
  match(redrawn, /^\s*3\. No/m);
  await tmux.keys("Up");
  // Drawn again in place, below the shell's lines.
  await tmux.waitFor(/^shell\$ fg\n.*mewcode.*\n❯ 1\. Yes\n {2}2\./m);
  await tmux.keys("Enter");
  await tmux.waitFor(/Written\./);
  equal(await Deno.readTextFile(box.path("new.txt")), "x\n");
});

Deno.test("interactive: Ctrl-Z at the trust question; after `fg` the question is asked again and answered", async () => {
  await using box = await E2eWorkspace.create();
  // A setting that loosens the sandbox: asked about before the session starts.
  await box.write(".mewcode/settings.json", JSON.stringify({ sandbox: { network: true } }));
  await using server = await startFakeAnthropic([turn().text("Untrusted, then.").stop("end_turn")]);
  await using tmux = await startUnderShell(box, server, "", /Trust this folder\? \[y\/N\]/);
  await tmux.keys("C-z");
  await tmux.waitFor(/^\[1\]\+\s+Stopped/m);
  await tmux.type("fg");
  await tmux.keys("Enter");
  await tmux.waitFor(
    /^shell\$ fg\n.*mewcode.*\n\s*Trusted repository hooks run inside the sandbox\. Trust this folder\?/m,
  );
  await tmux.type("n");
  await tmux.waitFor(/Not trusted: its settings only tighten/);
  await tmux.waitFor(/^›/m);
});

Deno.test("interactive: Ctrl-Z at the session picker; after `fg` the list is drawn again and picks", async () => {
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("First answer.").stop("end_turn"),
    turn().text("Resumed.").stop("end_turn"),
  ]);
  const first = await box.run(server, ["-p", "remember this prompt"]);
  equal(first.code, 0, first.stderr);
  await using tmux = await startUnderShell(box, server, "-r", /Resume which session\?/);
  await tmux.keys("C-z");
  await tmux.waitFor(/^\[1\]\+\s+Stopped/m);
  await tmux.type("fg");
  await tmux.keys("Enter");
  await tmux.waitFor(/^shell\$ fg\n.*mewcode.*\n❯ .*remember this prompt/m);
  await tmux.keys("Enter");
  await tmux.waitFor(/^›/m);
  await tmux.type("go on");
  await tmux.keys("Enter");
  await tmux.waitFor(/Resumed\./);
  // The resumed session sent the first exchange along.
  const texts = messagesOf(server, 2).flatMap((message) => message.content).map((block) => block.text ?? "");
  ok(texts.includes("First answer."), JSON.stringify(texts));
});

Deno.test("interactive: /resume of a session another run holds says so, and the conversation goes on", async () => {
  // It closed the session the user was in before it tried the other, which another run held: the user was
  // left with no session until /clear.
  await using box = await E2eWorkspace.create();
  await using server = await startFakeAnthropic([
    turn().text("Started.").stop("end_turn"),
    turn().text("Slow").delay(60_000).stop("end_turn"),
    turn().text("Still here.").stop("end_turn"),
  ]);
  const first = await box.exec(server, ["-p", "one"]);
  equal(first.code, 0, first.stderr);
  const start = (await box.transcript()).records[0];
  ok(start?.type === "session-start", JSON.stringify(start));
  const holder = new Deno.Command(LAUNCHER, {
    args: ["-p", "two", "-r", start.sessionId],
    cwd: box.root,
    env: box.env(server),
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    await waitFor(
      "the holding run never sent its request",
      () => Promise.resolve(server.requests.length >= 2),
      30_000,
    );
    await using tmux = await startSession(box, server);
    await tmux.waitFor(/^›/m);
    await tmux.type(`/resume ${start.sessionId}`);
    await tmux.keys("Enter");
    await tmux.waitFor(/\/resume: Session \S+ is in use by another mewcode run/);
    await tmux.type("still there?");
    await tmux.keys("Enter");
    await tmux.waitFor(/Still here\./);
  } finally {
    Deno.kill(holder.pid, "SIGKILL");
    await holder.status;
  }
});

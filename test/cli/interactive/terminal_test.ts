import { deepEqual, equal, notEqual, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import { type ColorEnv, type ColorLevel, detectColorLevel } from "../../../src/cli/interactive/terminal.ts";
import { FakeTty } from "./_fake_tty.ts";

Deno.test("detectColorLevel follows NO_COLOR, FORCE_COLOR, TERM and whether output is a terminal", async (t) => {
  const cases: [string, ColorEnv, boolean, ColorLevel][] = [
    ["a terminal", { TERM: "xterm" }, true, "basic"],
    ["a 256-colour terminal", { TERM: "xterm-256color" }, true, "256"],
    ["a truecolor terminal", { TERM: "xterm-256color", COLORTERM: "truecolor" }, true, "truecolor"],
    ["not a terminal", { TERM: "xterm-256color" }, false, "none"],
    ["TERM=dumb", { TERM: "dumb" }, true, "none"],
    ["NO_COLOR set", { TERM: "xterm", NO_COLOR: "1" }, true, "none"],
    ["NO_COLOR empty counts as unset", { TERM: "xterm", NO_COLOR: "" }, true, "basic"],
    ["FORCE_COLOR on a pipe", { FORCE_COLOR: "1" }, false, "basic"],
    ["FORCE_COLOR over NO_COLOR", { FORCE_COLOR: "1", NO_COLOR: "1" }, false, "basic"],
    ["FORCE_COLOR=3", { FORCE_COLOR: "3" }, false, "truecolor"],
    ["FORCE_COLOR=2", { FORCE_COLOR: "2" }, true, "256"],
    ["FORCE_COLOR=0 on a terminal", { TERM: "xterm", FORCE_COLOR: "0" }, true, "none"],
    ["FORCE_COLOR=false", { TERM: "xterm", FORCE_COLOR: "false" }, true, "none"],
  ];
  for (const [name, env, isTerminal, expected] of cases) {
    await t.step(name, () => equal(detectColorLevel(env, isTerminal), expected));
  }
});

Deno.test("Terminal reports its size, and 80×24 when the size is unknown", async () => {
  const tty = new FakeTty(100, 30);
  await using terminal = tty.terminal();
  deepEqual([terminal.columns, terminal.rows], [100, 30]);
  await using unknown = tty.terminal({
    size: () => {
      throw new Error("not a terminal");
    },
  });
  deepEqual([unknown.columns, unknown.rows], [80, 24]);
});

Deno.test("Terminal turns modes on and restore() turns each off once", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal();
  terminal.setRawMode(true);
  terminal.setBracketedPaste(true);
  terminal.setCursorVisible(false);
  terminal.write("> half a line");
  equal(tty.screen.modes.get(2004), true);
  equal(tty.screen.modes.get(25), false);
  terminal.restore();
  deepEqual(tty.rawCalls, [true, false]);
  equal(tty.screen.modes.get(2004), false);
  equal(tty.screen.modes.get(25), true);
  equal(tty.screen.text, "", "the unfinished line is erased");
  const written = tty.written.length;
  terminal.restore();
  equal(tty.written.length, written, "a second restore writes nothing");
  deepEqual(tty.rawCalls, [true, false]);
});

Deno.test("Terminal.stopProcess leaves the terminal as found while stopped, then takes its modes again", async () => {
  const tty = new FakeTty();
  let continueProcess = () => {};
  const seenWhileStopped: { raw: boolean[]; paste: boolean | undefined; cursor: boolean | undefined }[] = [];
  await using terminal = tty.terminal({
    stop: () => {
      seenWhileStopped.push({
        raw: [...tty.rawCalls],
        paste: tty.screen.modes.get(2004),
        cursor: tty.screen.modes.get(25),
      });
      // Stopped: nothing runs until the shell continues the process (`fg`), whose SIGCONT is then read.
      const until = performance.now() + 300;
      while (performance.now() < until) {
        // Stopped.
      }
      setTimeout(() => continueProcess(), 5);
    },
    onContinue: (listener) => {
      continueProcess = listener;
      return () => continueProcess = () => {};
    },
  });
  terminal.setRawMode(true);
  terminal.setBracketedPaste(true);
  terminal.setCursorVisible(false);
  const stopped = await terminal.stopProcess();
  equal(stopped, true);
  deepEqual(seenWhileStopped, [{ raw: [true, false], paste: false, cursor: true }], "the shell's terminal");
  deepEqual(tty.rawCalls, [true, false, true]);
  equal(tty.screen.modes.get(2004), true);
  equal(tty.screen.modes.get(25), false);
  // A reader is told to draw anew.
  deepEqual(await terminal.readKey(), { type: "resize", columns: 40, rows: 12 });
});

Deno.test("Terminal.stopProcess says so when nothing stopped the process (no job control)", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal({ stop: () => {}, onContinue: () => () => {} });
  terminal.setRawMode(true);
  equal(await terminal.stopProcess(), false);
  deepEqual(tty.rawCalls, [true, false, true]);
});

Deno.test("Terminal drops what it writes once a write failed (a hung-up terminal), instead of throwing", async () => {
  let calls = 0;
  let hungUp = false;
  const terminal = new FakeTty().terminal({
    output: {
      writeSync(bytes) {
        calls += 1;
        if (hungUp) throw new Error("Input/output error (os error 5)");
        return bytes.length;
      },
      isTerminal: () => true,
    },
  });
  terminal.write("before\n");
  equal(terminal.gone, false);
  hungUp = true;
  terminal.write("status line");
  equal(terminal.gone, true);
  terminal.write("after");
  terminal.restore();
  equal(calls, 2, "nothing is written after the failed write");
  await terminal.close();
});

Deno.test("Terminal.restore keeps a finished line and writes nothing for modes never turned on", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal();
  terminal.write("done\r\n");
  terminal.restore();
  deepEqual(tty.written, ["done\r\n"]);
  deepEqual(tty.rawCalls, []);
});

Deno.test("Terminal.readKey decodes input into events and returns null when input ends", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal();
  tty.send("hi", "\x1b[", "A", "\x1b[200~pasted\r", "text\x1b[201~");
  tty.end();
  deepEqual(await terminal.readKey(), { type: "text", text: "hi" });
  deepEqual(await terminal.readKey(), { type: "key", name: "up", ctrl: false, alt: false, shift: false });
  deepEqual(await terminal.readKey(), { type: "paste", text: "pasted\ntext" });
  equal(await terminal.readKey(), null);
});

Deno.test("Terminal.readKey waits the escape timeout for the rest of a sequence", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal({ escapeTimeoutMs: 300 });
  tty.send("\x1b");
  setTimeout(() => tty.send("[B"), 30);
  deepEqual(await terminal.readKey(), { type: "key", name: "down", ctrl: false, alt: false, shift: false });
});

Deno.test("Terminal.readKey takes a lone ESC as Esc once the escape timeout passes", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal({ escapeTimeoutMs: 20 });
  tty.send("\x1b");
  const started = performance.now();
  deepEqual(await terminal.readKey(), { type: "key", name: "escape", ctrl: false, alt: false, shift: false });
  ok(performance.now() - started >= 15);
  tty.send("[B");
  deepEqual(await terminal.readKey(), { type: "text", text: "[B" });
});

Deno.test("Terminal.readKey ends an unterminated paste after the paste timeout", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal({ pasteTimeoutMs: 30 });
  tty.send("\x1b[200~never ends");
  deepEqual(await terminal.readKey(), { type: "paste", text: "never ends" });
});

Deno.test("Terminal.readKey rejects on abort and keeps later input for the next reader", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal();
  const controller = new AbortController();
  const waiting = terminal.readKey({ signal: controller.signal });
  controller.abort(new Error("turn over"));
  await rejects(waiting, /turn over/);
  tty.send("x");
  deepEqual(await terminal.readKey(), { type: "text", text: "x" });
});

Deno.test("Terminal.readKey refuses a second reader while one is waiting", async () => {
  const tty = new FakeTty();
  await using terminal = tty.terminal();
  const first = terminal.readKey();
  await rejects(terminal.readKey(), /another read is waiting/);
  tty.send("x");
  deepEqual(await first, { type: "text", text: "x" });
});

Deno.test("Terminal.readKey reports a resize while waiting for input", async () => {
  const tty = new FakeTty(80, 24);
  await using terminal = tty.terminal();
  const waiting = terminal.readKey();
  await tty.idle();
  tty.resize(60, 20);
  deepEqual(await waiting, { type: "resize", columns: 60, rows: 20 });
});

Deno.test("Terminal.close restores the terminal and ends a pending read", async () => {
  const tty = new FakeTty();
  const terminal = tty.terminal();
  terminal.setRawMode(true);
  const waiting = terminal.readKey();
  await terminal.close();
  equal(await waiting, null);
  deepEqual(tty.rawCalls, [true, false]);
});

// In a real pseudo-terminal (tmux): the terminal is left as it was found whichever way the program ends.

const TMUX_AVAILABLE = await new Deno.Command("tmux", { args: ["-V"], stdout: "null", stderr: "null" })
  .output()
  .then((output) => output.success, () => false);

/** One tmux server on its own socket, running `script` in a pane 80×24. */
async function tmuxSession(
  dir: string,
  script: string,
): Promise<{ tmux: (...args: string[]) => Promise<string> } & AsyncDisposable> {
  const socket = `mewcode-test-${crypto.randomUUID().slice(0, 8)}`;
  const tmux = async (...args: string[]) => {
    const output = await new Deno.Command("tmux", {
      args: ["-L", socket, "-f", "/dev/null", ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!output.success) {
      throw new Error(`tmux ${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`);
    }
    return new TextDecoder().decode(output.stdout);
  };
  await Deno.writeTextFile(join(dir, "run.sh"), script);
  await tmux("new-session", "-d", "-s", "restore", "-x", "80", "-y", "24", `sh ${join(dir, "run.sh")}`);
  return { tmux, [Symbol.asyncDispose]: async () => void (await tmux("kill-server").catch(() => undefined)) };
}

async function waitForFile(path: string, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (text.endsWith("\n") || (text !== "" && !path.endsWith(".done"))) return text;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Timed out waiting for "${path}"`);
}

Deno.test({
  name: "Terminal.restoreOnExit leaves a real terminal as it found it however the program ends",
  ignore: !TMUX_AVAILABLE || Deno.build.os === "windows",
  async fn(t) {
    const child = new URL("./_restore_child.ts", import.meta.url).pathname;
    const endings: [
      string,
      string,
      number,
      (pid: number, tmux: (...args: string[]) => Promise<string>) => Promise<void>,
    ][] = [
      ["SIGTERM", "signal", 143, (pid) => Promise.resolve(Deno.kill(pid, "SIGTERM"))],
      ["SIGHUP", "signal", 129, (pid) => Promise.resolve(Deno.kill(pid, "SIGHUP"))],
      [
        "an uncaught error",
        "error",
        1,
        async (_, tmux) => void (await tmux("send-keys", "-t", "restore", "x")),
      ],
      [
        "an unhandled rejection",
        "rejection",
        1,
        async (_, tmux) => void (await tmux("send-keys", "-t", "restore", "x")),
      ],
      ["Deno.exit", "exit", 0, async (_, tmux) => void (await tmux("send-keys", "-t", "restore", "x"))],
    ];
    for (const [name, how, expectedStatus, end] of endings) {
      await t.step(name, async () => {
        const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-tty-" }));
        try {
          const file = (name: string) => join(dir, name);
          const script = [
            `stty -a > ${file("before")}`,
            `${Deno.execPath()} run --quiet --allow-all ${child} ${how} ${file("ready")} 2> ${
              file("stderr")
            }`,
            `echo $? > ${file("status")}`,
            `stty -a > ${file("after.tmp")} && mv ${file("after.tmp")} ${file("after")}`,
            `cat -v > ${file("pasted")}`,
            `echo done > ${file("pasted.done")}`,
          ].join("\n");
          await using session = await tmuxSession(dir, script);
          const pid = Number(await waitForFile(file("ready")));
          const paneTty = (await session.tmux("display-message", "-p", "-t", "restore", "#{pane_tty}"))
            .trim();
          const during = new TextDecoder().decode(
            (await new Deno.Command("stty", { args: ["-a", "-F", paneTty], stdout: "piped" }).output())
              .stdout,
          );
          const before = await Deno.readTextFile(file("before"));
          notEqual(during, before, "raw mode was on while the program ran");
          ok(/-icanon/.test(during) && /-echo\b/.test(during), during);

          await end(pid, session.tmux);
          equal(
            Number(await waitForFile(file("status"))),
            expectedStatus,
            await Deno.readTextFile(file("stderr")),
          );
          equal(await waitForFile(file("after")), before, "stty settings are restored");
          equal(
            (await session.tmux("display-message", "-p", "-t", "restore", "#{cursor_flag}")).trim(),
            "1",
            "cursor shown",
          );
          const pane = await session.tmux("capture-pane", "-p", "-t", "restore");
          ok(!pane.includes("unfinished input"), `the unfinished line is erased:\n${pane}`);

          // With bracketed paste still on, tmux would wrap this paste in ESC[200~ … ESC[201~.
          await session.tmux("set-buffer", "pasted text");
          await session.tmux("paste-buffer", "-p", "-t", "restore");
          await session.tmux("send-keys", "-t", "restore", "Enter", "C-d");
          await waitForFile(file("pasted.done"));
          equal(await Deno.readTextFile(file("pasted")), "pasted text\n", "bracketed paste is off");
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      });
    }
  },
});

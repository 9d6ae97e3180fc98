/**
 * Drives a program in a real pseudo-terminal through tmux: start it in a detached session on a private tmux
 * server, type keys, read the screen. For the interactive session's end-to-end tests.
 *
 * @module
 */

/** How to start the program. */
export interface TmuxStart {
  /** A shell command line (run by /bin/sh in the pane). */
  command: string;
  cwd: string;
  env: Record<string, string>;
  width?: number;
  height?: number;
}

let counter = 0;

/** A program running in a tmux pane; `await using` kills the private tmux server. */
export class TmuxSession implements AsyncDisposable {
  readonly socket: string;
  readonly name = "mewcode-test";

  private constructor(socket: string) {
    this.socket = socket;
  }

  static async start(options: TmuxStart): Promise<TmuxSession> {
    const socket = `mewcode-test-${Deno.pid}-${++counter}-${Date.now()}`;
    const session = new TmuxSession(socket);
    // A clean environment (the test's own, such as CI's NO_COLOR, must not leak in), with what Deno needs
    // to find its cache.
    const inherited = Object.fromEntries(
      ["HOME", "DENO_DIR", "XDG_CACHE_HOME", "MEWCODE_DENO", "PATH"].flatMap((name) => {
        const value = Deno.env.get(name);
        return value === undefined ? [] : [[name, value]];
      }),
    );
    const env = Object.entries({ LANG: "C.UTF-8", ...inherited, ...options.env })
      .map(([key, value]) => `${key}=${shellQuote(value)}`).join(" ");
    await session.#tmux([
      "new-session",
      "-d",
      "-s",
      session.name,
      "-x",
      String(options.width ?? 100),
      "-y",
      String(options.height ?? 40),
      "-c",
      options.cwd,
      `env -i ${env} ${options.command}`,
    ]);
    // Keep the pane (and its last screen) when the program ends, so its exit can be checked.
    await session.#tmux(["set-option", "-t", session.name, "remain-on-exit", "on"]);
    return session;
  }

  /** Sends keys as tmux names them: "Enter", "Escape", "C-c", "Down", or literal text with `literal`. */
  async keys(...keys: string[]): Promise<void> {
    await this.#tmux(["send-keys", "-t", this.name, ...keys]);
  }

  /** Types text literally. */
  async type(text: string): Promise<void> {
    await this.#tmux(["send-keys", "-t", this.name, "-l", text]);
  }

  /** The screen as plain text (trailing blank lines dropped). */
  async screen(): Promise<string> {
    const text = await this.#tmux(["capture-pane", "-p", "-t", this.name]);
    return text.replace(/\n+$/, "\n");
  }

  /** The screen with its colours, as ANSI escapes. */
  async screenWithColours(): Promise<string> {
    return await this.#tmux(["capture-pane", "-p", "-e", "-t", this.name]);
  }

  /** Waits until the screen matches; returns it. Throws with the last screen after `timeoutMs`. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      last = await this.screen();
      if (pattern.test(last)) return last;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`The screen never matched ${pattern} within ${timeoutMs} ms. Last screen:\n${last}`);
  }

  /** The program's exit status once it ended (-1 when tmux does not say), or null while it runs. */
  async exitStatus(): Promise<number | null> {
    const text = await this.#tmux([
      "display-message",
      "-p",
      "-t",
      this.name,
      "#{pane_dead} #{pane_dead_status}",
    ]);
    const [dead, status] = text.trim().split(" ");
    if (dead !== "1") return null;
    // Older tmux versions do not report the status: -1 then (check it another way).
    return status === undefined || status === "" ? -1 : Number(status);
  }

  /** Waits for the program to end; returns its exit status. */
  async waitForExit(timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const status = await this.exitStatus();
      if (status !== null) return status;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`The program did not exit within ${timeoutMs} ms. Last screen:\n${await this.screen()}`);
  }

  /** Closes the terminal as a closed window or a dropped SSH session does: its programs get SIGHUP. */
  async hangUp(): Promise<void> {
    await this.#tmux(["kill-session", "-t", this.name]);
  }

  /** Pastes `text` as a terminal does with bracketed paste on (the program sees the paste markers). */
  async paste(text: string): Promise<void> {
    await this.#tmux(["set-buffer", "-b", "mewcode-paste", "--", text]);
    await this.#tmux(["paste-buffer", "-p", "-d", "-b", "mewcode-paste", "-t", this.name]);
  }

  /** The pane's title, which an OSC 0 or 2 sequence that reached the terminal would have set. */
  async paneTitle(): Promise<string> {
    return (await this.#tmux(["display-message", "-p", "-t", this.name, "#{pane_title}"])).trim();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.#tmux(["kill-server"]).catch(() => "");
  }

  async #tmux(args: string[]): Promise<string> {
    const output = await new Deno.Command("tmux", { args: ["-L", this.socket, ...args], stdin: "null" })
      .output();
    if (!output.success) {
      throw new Error(`tmux ${args[0]} failed: ${new TextDecoder().decode(output.stderr)}`);
    }
    return new TextDecoder().decode(output.stdout);
  }
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

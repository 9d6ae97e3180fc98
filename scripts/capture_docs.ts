/**
 * `deno task docs`: plays a scripted interactive session (the fake Anthropic server stands in for the
 * model) in a real terminal through tmux, and keeps what the screen showed in docs/: the plain text and an
 * SVG image of each captured moment. README shows them.
 *
 * @module
 */
import { join } from "node:path";
import { startFakeAnthropic, turn } from "../test/fake_anthropic/server.ts";
import { TmuxSession } from "../test/_fakes/tmux.ts";
import { ansiToSvg } from "./docs/ansi_svg.ts";

const COLUMNS = 100;
const DOCS = new URL("../docs/", import.meta.url).pathname;
const LAUNCHER = new URL("./mewcode", import.meta.url).pathname;

const ANSWER = `The build fails because \`parseConfig\` returns \`undefined\` for an empty file:

- \`src/config.ts\` reads the file and returns early when it is empty
- \`src/main.ts\` then calls \`.port\` on the result

A guard in \`parseConfig\` fixes it:

\`\`\`ts
if (text.trim() === "") return DEFAULT_CONFIG;
\`\`\`

| file | change |
|------|--------|
| src/config.ts | return the defaults for an empty file |
| src/main.ts | unchanged |
`;

async function main(): Promise<void> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "mewcode-docs-ws-" }));
  const home = await Deno.makeTempDir({ prefix: "mewcode-docs-home-" });
  try {
    await Deno.mkdir(join(root, "src"));
    const config = join(root, "src", "config.ts");
    await Deno.writeTextFile(
      config,
      'export function parseConfig(text: string) {\n  if (text.trim() === "") return;\n  return JSON.parse(text);\n}\n',
    );
    await using server = await startFakeAnthropic([
      turn().toolUse("ReadFile", { path: config }).toolUse("Grep", { pattern: "parseConfig" }),
      turn().text(ANSWER, { chunk: 9 }).stop("end_turn"),
      turn().toolUse("EditFile", {
        path: config,
        old_string: '  if (text.trim() === "") return;',
        new_string: '  if (text.trim() === "") return DEFAULT_CONFIG;',
      }),
      turn().toolUse("Bash", { command: "echo 'tests: 12 passed'" }),
      turn().text("Fixed: an empty config file now gives the defaults, and the tests pass.").stop("end_turn"),
    ]);
    await using tmux = await TmuxSession.start({
      command: LAUNCHER,
      cwd: root,
      env: {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: "docs",
        MEWCODE_HOME: home,
        TERM: "xterm-256color",
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      },
      width: COLUMNS,
      height: 44,
    });
    await tmux.waitFor(/^›/m);
    await tmux.type("why does the build fail?");
    await tmux.keys("Enter");
    await tmux.waitFor(/unchanged/);
    await tmux.type("fix it and run the tests");
    await tmux.keys("Enter");
    await tmux.waitFor(/Yes, and don't ask again/);
    await keep(tmux, "interactive-approval", root, home);
    await tmux.keys("1");
    await tmux.waitFor(/Bash needs your approval/);
    await tmux.keys("1");
    await tmux.waitFor(/tests pass\./);
    await tmux.waitFor(/^›/m);
    await keep(tmux, "interactive-session", root, home);
  } finally {
    await Deno.remove(root, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

/** Writes the screen as docs/NAME.txt and docs/NAME.svg, with the temporary paths made stable. */
async function keep(tmux: TmuxSession, name: string, root: string, home: string): Promise<void> {
  const stable = (text: string) => text.replaceAll(root, "/home/ada/app").replaceAll(home, "~/.mewcode");
  await Deno.mkdir(DOCS, { recursive: true });
  await Deno.writeTextFile(join(DOCS, `${name}.txt`), stable(await tmux.screen()));
  const svg = ansiToSvg(stable(await tmux.screenWithColours()), {
    columns: COLUMNS,
    title: `mewcode: ${name}`,
  });
  await Deno.writeTextFile(join(DOCS, `${name}.svg`), svg);
  console.error(`docs: wrote ${name}.txt and ${name}.svg`);
}

if (import.meta.main) await main();

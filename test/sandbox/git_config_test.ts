import { deepStrictEqual, equal, notEqual } from "node:assert/strict";
import { join } from "node:path";
import { gitConfigEffect, type GitConfigEntry, parseGitConfig } from "../../src/sandbox/git_config.ts";
import { createTempWorkspace } from "../_fakes/tool_context.ts";
import { git } from "./_git_fixture.ts";

/** What git itself reads from a config text: `[name, value]` pairs (null for a bare key), or its error. */
async function readWithGit(text: string): Promise<Array<[string, string | null]> | { badLine: number }> {
  await using workspace = await createTempWorkspace();
  const file = join(workspace.root, "config");
  await Deno.writeTextFile(file, text);
  const result = await git(workspace.root, "config", "--file", file, "--list", "-z");
  if (result.code !== 0) return { badLine: Number(/line (\d+)/.exec(result.stderr)?.[1] ?? -1) };
  return result.stdout.split("\0").filter((item) => item !== "").map((item) => {
    const newline = item.indexOf("\n");
    return newline === -1 ? [item, null] : [item.slice(0, newline), item.slice(newline + 1)];
  });
}

const pairs = (entries: GitConfigEntry[]): Array<[string, string | null]> =>
  entries.map((entry) => [entry.name, entry.value]);

Deno.test("parseGitConfig reads every entry as git does", async (t) => {
  const cases: Record<string, string> = {
    "plain section and key": "[core]\n\tfsmonitor = touch x\n",
    "case-insensitive section and key": "[CoRe]\nFSMonitor = z\n",
    "subsection keeps case and escapes": '[filter "A \\"b\\" c\\\\d\\e"]\n  Clean = x\n',
    "deprecated dotted subsection is lowercased": "[Filter.LFS]\nClean = y\n",
    "key on the header line": "[core] fsmonitor = w\n",
    "key at end of file without newline": "[core]pager=x",
    "continuation lines": "[core]\nfsmonitor = a\\\n  b \\\nc\n",
    "comments everywhere": '; c\n# c\n[core] # hi\n pager = less # c\n editor = "vim # not ; c" ; c\n',
    "bare key means true": "[core]\n bare\n\tfilemode\n",
    "empty value": '[core]\n pager =\n editor = ""\n',
    "escapes in values": '[alias]\n x = "!echo \\t\\n\\b\\\\ \\" "\n',
    "blank runs become one space each, outer blanks dropped": "[core]\n pager = a \t  b   \n",
    "quoted blanks kept": '[core]\n pager = a"  b  "c  " d "\n',
    "CRLF line ends": "[core]\r\n pager = a\r\n\r\n[alias]\r\n x = !y\r\n",
    "byte order mark": "\uFEFF[core]\n pager = p\n",
    "blanks before the subsection": '[remote \t "o"]\n url = ext::sh -c x\n',
    "includeIf subsection with colon and slash": '[includeIf "gitdir:/X/"]\n path = ../y\n',
    "keys with dashes and digits, repeated sections":
      '[diff "x"]\n text-conv2 = y\n[diff "x"]\n textconv = z\n',
    "semicolon inside quotes, after a quote": '[core]\n pager = "a;b"; c\n',
  };
  for (const [name, text] of Object.entries(cases)) {
    await t.step(name, async () => {
      const expected = await readWithGit(text);
      const parsed = parseGitConfig(text);
      deepStrictEqual(parsed.errors, []);
      deepStrictEqual(pairs(parsed.entries), expected);
    });
  }
});

Deno.test("parseGitConfig reports the line where git stops reading", async (t) => {
  const cases: Record<string, string> = {
    "unterminated section header": "[core]\n x = 1\n[core\n",
    "unterminated subsection": '[core]\n x = 1\n[filter "x]\n',
    "unterminated quoted value": '[core]\n pager = "less\n',
    "key starting with a digit": "[core]\n pager = a\n 1key = x\n",
    "key without =": "[core]\n pager x\n",
    "invalid escape": "[core]\n pager = \\q\n",
    "character that starts nothing": "[core]\n = x\n",
    "empty section name": "[]\n x = 1\n",
  };
  for (const [name, text] of Object.entries(cases)) {
    await t.step(name, async () => {
      const expected = await readWithGit(text);
      const parsed = parseGitConfig(text);
      notEqual(parsed.errors.length, 0);
      deepStrictEqual(expected, { badLine: parsed.errors[0]!.line });
    });
  }
});

Deno.test("parseGitConfig keeps reading after a bad line, so later entries are still reported", () => {
  const parsed = parseGitConfig('[core]\n pager = "unterminated\n fsmonitor = touch x\n[alias]\n y = !z\n');
  deepStrictEqual(parsed.errors.map((error) => error.line), [2]);
  deepStrictEqual(pairs(parsed.entries), [["core.fsmonitor", "touch x"], ["alias.y", "!z"]]);
  equal(parsed.entries[0]!.line, 3);
});

Deno.test("parseGitConfig splits names into section, subsection and key", () => {
  const [entry] = parseGitConfig('[includeIf "gitdir:~/Work/"]\n\tPath = x\n').entries;
  deepStrictEqual(entry, {
    section: "includeif",
    subsection: "gitdir:~/Work/",
    key: "path",
    name: "includeif.gitdir:~/Work/.path",
    value: "x",
    line: 2,
  });
});

Deno.test("gitConfigEffect flags the entries that run commands, load config or redirect git", async (t) => {
  const cases: Array<[string, ReturnType<typeof gitConfigEffect>]> = [
    ["[core]\nfsmonitor = x", "runs-command"],
    ["[core]\nhooksPath = x", "sets-hooks"],
    ["[core]\npager = x", "runs-command"],
    ["[core]\nsshCommand = x", "runs-command"],
    ["[sequence]\neditor = x", "runs-command"],
    ['[filter "lfs"]\nprocess = x', "runs-command"],
    ['[diff "x"]\ntextconv = x', "runs-command"],
    ["[diff]\nexternal = x", "runs-command"],
    ['[merge "x"]\ndriver = x', "runs-command"],
    ["[credential]\nhelper = x", "runs-command"],
    ['[credential "https://h"]\nhelper = x', "runs-command"],
    ["[alias]\nst = ! touch x", "runs-command"],
    ["[alias]\nst = status", null],
    ["[gpg]\nprogram = x", "runs-command"],
    ['[gpg "ssh"]\nprogram = x', "runs-command"],
    ["[include]\npath = x", "includes-config"],
    ['[includeIf "onbranch:main"]\npath = x', "includes-config"],
    ['[remote "o"]\nuploadpack = x', "runs-command"],
    ["[uploadpack]\npackObjectsHook = x", "runs-command"],
    ['[protocol "ext"]\nallow = always', "allows-protocol"],
    ['[submodule "s"]\nupdate = !x', "runs-command"],
    ['[submodule "s"]\nupdate = rebase', null],
    ["[pager]\nlog = x", "runs-command"],
    ["[core]\nfilemode = true", null],
    ['[remote "o"]\nurl = x', null],
    ["[filter]\nclean = x", null],
  ];
  for (const [text, effect] of cases) {
    await t.step(text.replace("\n", " "), () => {
      const [entry] = parseGitConfig(text).entries;
      equal(gitConfigEffect(entry!), effect);
    });
  }
});

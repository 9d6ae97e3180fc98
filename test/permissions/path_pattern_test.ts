import { equal } from "node:assert/strict";
import { compilePathPattern, matchesPath } from "../../src/permissions/path_pattern.ts";

const BASES = { workspace: "/ws", home: "/home/u" };

Deno.test("file rule patterns are gitignore-style globs anchored as Claude Code users expect", async (t) => {
  const cases: [string, string, boolean][] = [
    // relative to the workspace ("./", a leading "/", or a "/" inside anchor it)
    ["./.env", "/ws/.env", true],
    ["./.env", "/ws/sub/.env", false],
    ["/.env", "/ws/.env", true],
    ["src/**", "/ws/src/a/b.ts", true],
    ["src/**", "/ws/src", true],
    ["src/**", "/ws/lib/src/a.ts", false],
    ["src/**", "/elsewhere/src/a.ts", false],
    ["src/*.ts", "/ws/src/a.ts", true],
    ["src/*.ts", "/ws/src/deep/a.ts", false],
    ["src/**/*.ts", "/ws/src/deep/a.ts", true],
    ["docs/", "/ws/docs/guide.md", true],
    // a folder covers everything in it, as in .gitignore
    ["secrets", "/ws/secrets/key.pem", true],
    ["config/prod", "/ws/config/prod/db.yml", true],
    // no "/" inside: that name at any depth, anywhere
    [".env", "/ws/.env", true],
    [".env", "/ws/a/b/.env", true],
    [".env", "/other/.env", true],
    [".env", "/ws/.env.example", false],
    ["*.pem", "/ws/certs/server.pem", true],
    ["node_modules", "/ws/pkg/node_modules/x/index.js", true],
    // absolute and home
    ["//etc/hosts", "/etc/hosts", true],
    ["//etc/**", "/etc/ssh/sshd_config", true],
    ["//etc/**", "/ws/etc/x", false],
    ["~/.ssh/**", "/home/u/.ssh/id_rsa", true],
    ["~/.ssh/**", "/ws/.ssh/id_rsa", false],
    ["~", "/home/u/anything", true],
    // catch-alls
    ["**", "/ws/any/thing", true],
    ["*", "/ws/any/thing", true],
  ];
  for (const [specifier, path, expected] of cases) {
    await t.step(`${specifier} ${expected ? "matches" : "does not match"} ${path}`, () => {
      const compiled = compilePathPattern(specifier);
      if (!compiled.ok) throw new Error(compiled.error);
      equal(matchesPath(compiled.value, path, BASES), expected);
    });
  }
});

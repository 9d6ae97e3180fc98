import { equal } from "node:assert/strict";
import { compilePathPattern } from "../../src/permissions/path_pattern.ts";
import { namesProtection, protectionAt } from "../../src/permissions/protection.ts";
import { PROTECTED_PATHS, protectionOf } from "../../src/tools/protected_paths.ts";

Deno.test("protectionAt gives the writers' own answer (protectionOf) for every path", async (t) => {
  const paths = [
    ".git",
    ".git/config",
    "sub/.git/hooks/pre-commit",
    ".GIT/config",
    ".gitignore",
    ".github/workflows/ci.yml",
    ".mewcode/settings.json",
    "sub/.mewcode/x",
    ".gitmodules",
    ".vscode/settings.json",
    ".idea/workspace.xml",
    "sub/.idea/workspace.xml",
    "sub/.claude/settings.json",
    "sub/.mcp.json",
    "sub/.devcontainer.json",
    "app.code-workspace",
    "sub/App.Code-Workspace",
    ".code-workspace",
    "mise.toml",
    "sub/.config/mise.toml",
    "sub/mise/config.toml",
    "mise/config.toml",
    "mise/config.ci.toml",
    "a/.config/mise/conf.d/x.toml",
    "mise/main.go",
    "a/mise/conf.d/x.toml",
    "sub/.rtx.toml",
    "sub/crush.json",
    ".crushrc",
    "sub/.continuerc.json",
    "sub/mise.production.toml",
    "mise..toml",
    ".tool-versions",
    "sub/opencode.json",
    "sub/.zed/settings.json",
    "sub/.kiro/hooks/x.kiro.hook",
    ".bashrc",
    ".config/fish/config.fish",
    ".config/other",
    "src/a.ts",
    "src/.bashrc",
  ];
  for (const path of paths) {
    await t.step(path, () => {
      equal(
        protectionAt(path, PROTECTED_PATHS)?.path ?? null,
        protectionOf(path, PROTECTED_PATHS)?.path ?? null,
      );
    });
  }
});

Deno.test("namesProtection accepts rules that name a protected path, never catch-alls", async (t) => {
  const bases = { workspace: "/ws", home: "/home/u" };
  const git = PROTECTED_PATHS.find((entry) => entry.path === ".git")!;
  const mewcode = PROTECTED_PATHS.find((entry) => entry.path === ".mewcode")!;
  const fish = PROTECTED_PATHS.find((entry) => entry.path === ".config/fish")!;
  const workspaceFile = PROTECTED_PATHS.find((entry) => entry.path === "*.code-workspace")!;
  const miseEnvFile = PROTECTED_PATHS.find((entry) => entry.path === "mise.*.toml")!;
  const miseFolderFile = PROTECTED_PATHS.find((entry) => entry.path === "mise/config.toml")!;
  const confD = PROTECTED_PATHS.find((entry) => entry.path === ".config/mise/conf.d")!;
  const cases: [string, typeof git, boolean][] = [
    [".git/info/exclude", git, true],
    [".git", git, true],
    ["**/.git/**", git, true],
    ["//ws/.git/config", git, true],
    ["**", git, false],
    ["*", git, false],
    [".g?t/**", git, false],
    [".mewcode/**", mewcode, true],
    ["./.mewcode/settings.json", mewcode, true],
    ["//ws/.mewcode/**", mewcode, true],
    ["//other/.mewcode/**", mewcode, false],
    [".mewcode", mewcode, true],
    [".*/**", mewcode, false],
    ["{.mewcode,src}/**", mewcode, false],
    [".config/fish/**", fish, true],
    [".config/**", fish, false],
    ["app.code-workspace", workspaceFile, true],
    ["api/Web.code-workspace", workspaceFile, true],
    ["*.code-workspace", workspaceFile, false],
    ["**/*.code-workspace", workspaceFile, false],
    ["mise.production.toml", miseEnvFile, true],
    ["api/mise.ci.local.toml", miseEnvFile, true],
    ["mise.*.toml", miseEnvFile, false],
    ["**/mise.*.toml", miseEnvFile, false],
    ["mise/config.toml", miseFolderFile, true],
    ["api/.config/mise/config.toml", miseFolderFile, true],
    ["mise/**", miseFolderFile, false],
    ["config.toml", miseFolderFile, false],
    ["api/.config/mise/conf.d/x.toml", confD, true],
    ["api/.config/mise/conf.d/**", confD, true],
    [".config/**", confD, false],
  ];
  for (const [specifier, entry, expected] of cases) {
    await t.step(`${specifier} ${expected ? "names" : "does not name"} ${entry.path}`, () => {
      const compiled = compilePathPattern(specifier);
      if (!compiled.ok) throw new Error(compiled.error);
      equal(namesProtection(compiled.value, entry, { root: "/ws", bases }), expected);
    });
  }
});

import { deepStrictEqual } from "node:assert/strict";
import { userGitConfig } from "../../src/sandbox/_user_git_config.ts";

Deno.test("userGitConfig lists the system and global config files git reads, as the environment sets them", async (t) => {
  await t.step("defaults: /etc/gitconfig, the XDG file, ~/.gitconfig", () => {
    deepStrictEqual(userGitConfig({ HOME: "/home/u" }).files, [
      "/etc/gitconfig",
      "/home/u/.config/git/config",
      "/home/u/.gitconfig",
    ]);
  });
  await t.step("XDG_CONFIG_HOME and GIT_CONFIG_NOSYSTEM", () => {
    deepStrictEqual(
      userGitConfig({ HOME: "/home/u", XDG_CONFIG_HOME: "/x", GIT_CONFIG_NOSYSTEM: "true" }).files,
      [
        "/x/git/config",
        "/home/u/.gitconfig",
      ],
    );
  });
  await t.step("GIT_CONFIG_SYSTEM and GIT_CONFIG_GLOBAL replace the defaults", () => {
    deepStrictEqual(
      userGitConfig({
        HOME: "/home/u",
        GIT_CONFIG_SYSTEM: "/s",
        GIT_CONFIG_GLOBAL: "/g",
        GIT_CONFIG_NOSYSTEM: "0",
      })
        .files,
      ["/s", "/g"],
    );
  });
});

Deno.test("userGitConfig reads the entries GIT_CONFIG_COUNT adds, named as config files name them", () => {
  const user = userGitConfig({
    GIT_CONFIG_COUNT: "2",
    GIT_CONFIG_KEY_0: "core.hooksPath",
    GIT_CONFIG_VALUE_0: ".hooks",
    GIT_CONFIG_KEY_1: "Filter.Lfs.Clean",
    GIT_CONFIG_VALUE_1: "x",
  });
  deepStrictEqual(user.environment.map((entry) => [entry.name, entry.value]), [
    ["core.hookspath", ".hooks"],
    ["filter.Lfs.clean", "x"],
  ]);
  deepStrictEqual(user.home, null);
});

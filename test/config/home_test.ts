import { equal, ok, throws } from "node:assert/strict";
import { projectDir, resolveMewcodeHome, workspaceSlug } from "../../src/config/home.ts";

Deno.test("resolveMewcodeHome prefers MEWCODE_HOME, then ~/.mewcode", () => {
  equal(resolveMewcodeHome({ MEWCODE_HOME: "/state", HOME: "/home/ada" }), "/state");
  equal(resolveMewcodeHome({ HOME: "/home/ada" }), "/home/ada/.mewcode");
  equal(resolveMewcodeHome({ MEWCODE_HOME: "  ", USERPROFILE: "/users/ada" }), "/users/ada/.mewcode");
  throws(() => resolveMewcodeHome({}), /set MEWCODE_HOME or HOME/);
});

Deno.test("workspaceSlug replaces every non-alphanumeric character with a dash", async () => {
  equal(await workspaceSlug("/home/ada/my.app"), "-home-ada-my-app");
  equal(await projectDir("/state", "/w"), "/state/projects/-w");
});

Deno.test("workspaceSlug keeps long paths short and distinct", async () => {
  const base = `/${"deep/".repeat(40)}`;
  const one = await workspaceSlug(`${base}one-project`);
  const two = await workspaceSlug(`${base}one_project`);
  ok(one.length <= 120);
  ok(one !== two);
  ok(one.includes("one-project"));
});

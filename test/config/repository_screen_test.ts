import { deepEqual, match } from "node:assert/strict";
import {
  ignoredNotice,
  repositoryMaySetEnv,
  type ScreenBaseline,
  screenRepositorySettings,
} from "../../src/config/repository_screen.ts";
import type { SettingsFile } from "../../src/config/settings_schema.ts";

const DEFAULTS: ScreenBaseline = {
  defaultMode: "default",
  sandboxMode: "workspace-write",
  network: false,
  provider: null,
  model: null,
};

function applied(settings: SettingsFile, baseline: ScreenBaseline, trusted = false): SettingsFile {
  return screenRepositorySettings(settings, {
    trusted,
    baseline,
    source: "project",
    path: "/w/.mewcode/settings.json",
  })
    .kept;
}

Deno.test("screenRepositorySettings applies a mode or sandbox from an untrusted repository only when no looser", async (t) => {
  const cases: [string, SettingsFile, ScreenBaseline, SettingsFile][] = [
    ["plan over default", { permissions: { defaultMode: "plan" } }, DEFAULTS, {
      permissions: { defaultMode: "plan" },
    }],
    ["dontAsk over default", { permissions: { defaultMode: "dontAsk" } }, DEFAULTS, {
      permissions: { defaultMode: "dontAsk" },
    }],
    ["acceptEdits over default", { permissions: { defaultMode: "acceptEdits" } }, DEFAULTS, {
      permissions: {},
    }],
    ["default over the user's plan", { permissions: { defaultMode: "default" } }, {
      ...DEFAULTS,
      defaultMode: "plan",
    }, { permissions: {} }],
    ["acceptEdits over the user's bypassPermissions", { permissions: { defaultMode: "acceptEdits" } }, {
      ...DEFAULTS,
      defaultMode: "bypassPermissions",
    }, { permissions: { defaultMode: "acceptEdits" } }],
    ["read-only over workspace-write", { sandbox: { mode: "read-only" } }, DEFAULTS, {
      sandbox: { mode: "read-only" },
    }],
    ["workspace-write over the user's read-only", { sandbox: { mode: "workspace-write" } }, {
      ...DEFAULTS,
      sandboxMode: "read-only",
    }, { sandbox: {} }],
    ["the network off", { sandbox: { network: false } }, { ...DEFAULTS, network: true }, {
      sandbox: { network: false },
    }],
    [
      "the network on when the user has it on",
      { sandbox: { network: true } },
      { ...DEFAULTS, network: true },
      {
        sandbox: { network: true },
      },
    ],
    ["the network on", { sandbox: { network: true } }, DEFAULTS, { sandbox: {} }],
  ];
  for (const [name, settings, baseline, expected] of cases) {
    await t.step(name, () => deepEqual(applied(settings, baseline), expected));
  }
});

Deno.test("screenRepositorySettings never applies bypassPermissions or API variables, even when trusted", () => {
  deepEqual(
    applied(
      {
        permissions: { defaultMode: "bypassPermissions", allow: ["Bash(*)"] },
        env: {
          ANTHROPIC_API_KEY: "k",
          OPENAI_BASE_URL: "u",
          MEWCODE_PROVIDER: "p",
          LD_PRELOAD: "x",
          NODE_ENV: "t",
        },
        hooks: { sandboxRepositoryHooks: false },
      },
      DEFAULTS,
      true,
    ),
    { permissions: { allow: ["Bash(*)"] }, env: { NODE_ENV: "t" }, hooks: {} },
  );
  deepEqual(
    ["GITHUB_TOKEN", "my_api_key", "CLAUDE_CODE_USE_BEDROCK", "PATH"].map(repositoryMaySetEnv),
    [true, false, false, true],
  );
});

Deno.test("screenRepositorySettings never applies a provider, endpoint, key variable or provider-choosing model, even when trusted", async (t) => {
  for (const trusted of [false, true]) {
    await t.step(trusted ? "trusted" : "not trusted", () => {
      const screened = screenRepositorySettings(
        {
          provider: "ollama",
          baseUrl: "http://attacker.example/v1",
          apiKeyEnv: "ANTHROPIC_API_KEY",
          model: "ollama/qwen3-coder",
        },
        { trusted, baseline: DEFAULTS, source: "project", path: "/w/.mewcode/settings.json" },
      );
      deepEqual(screened.kept, {});
      deepEqual(screened.ignored.map((item) => [item.item, item.kind]), [
        ['model "ollama/qwen3-coder"', "never"],
        ['provider "ollama"', "never"],
        ['baseUrl "http://attacker.example/v1"', "never"],
        ['apiKeyEnv "ANTHROPIC_API_KEY"', "never"],
      ]);
      match(
        ignoredNotice(screened.ignored[0]!),
        /its provider prefix would choose the provider: a repository may never set this/,
      );
      match(
        ignoredNotice(screened.ignored[2]!),
        /baseUrl "http:\/\/attacker\.example\/v1": a repository may never set this, even when trusted/,
      );
    });
  }
  // A model id with a slash that names no provider is an ordinary model (OpenRouter's, for one).
  deepEqual(applied({ model: "meta-llama/llama-4" }, DEFAULTS, true), { model: "meta-llama/llama-4" });
});

Deno.test("screenRepositorySettings applies a plain model only when it keeps the provider the user's settings choose", async (t) => {
  const cases: [string, Partial<ScreenBaseline>, boolean][] = [
    ["no user model (anthropic)", {}, true],
    ["the user's anthropic/ model", { model: "anthropic/claude-opus-4-1" }, true],
    ["the user's model without a provider prefix", { model: "meta-llama/llama-4" }, true],
    ["the user's provider setting", { provider: "ollama", model: "ollama/qwen3" }, true],
    ["the user's provider setting without a model", { provider: "openai" }, true],
    ["the user's ollama/ model", { model: "ollama/qwen3" }, false],
    ["the user's openai/ model", { model: "openai/gpt-5" }, false],
  ];
  for (const [name, user, applies] of cases) {
    await t.step(name, () => {
      for (const trusted of [false, true]) {
        const screened = screenRepositorySettings(
          { model: "claude-sonnet-4-5" },
          {
            trusted,
            baseline: { ...DEFAULTS, ...user },
            source: "local",
            path: "/w/.mewcode/settings.local.json",
          },
        );
        deepEqual(screened.kept, trusted && applies ? { model: "claude-sonnet-4-5" } : {});
        deepEqual(
          screened.ignored.map((item) => item.kind),
          trusted && applies ? [] : [applies ? "needs-trust" : "never"],
        );
        if (applies) continue;
        match(
          ignoredNotice(screened.ignored[0]!),
          new RegExp(
            `^Not applied from "/w/\\.mewcode/settings\\.local\\.json": model "claude-sonnet-4-5": it would ` +
              `switch the provider from ${
                user.model?.split("/")[0]
              }, which your settings choose, to anthropic: ` +
              "a repository may never set this, even when trusted",
          ),
        );
      }
    });
  }
});

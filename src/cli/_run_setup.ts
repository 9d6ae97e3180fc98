/**
 * What a one-shot run needs besides its prompt, checked before anything starts: the session's options from
 * the flags and settings, the session to continue, the system prompt files and the `--json-schema`
 * contract. A problem with any of them is a UsageError (exit 2), found before a request is sent.
 *
 * @module
 */
import type { AnswerContract } from "../agent/loop.ts";
import { assertNever, describeError } from "../common/errors.ts";
import { lazyImport } from "../common/lazy_import.ts";
import { type ReadUpTo, readUpTo } from "../common/read_up_to.ts";
import type { Message } from "../llm/provider.ts";
import { priceOn } from "../llm/prices.ts";
import type { TranscriptStamp } from "../session/transcript.ts";
import type { Workspace } from "../session/workspace.ts";
import { type CliOptions, UsageError } from "./args.ts";
import {
  continuedSetup,
  requireEndpoint,
  requireModel,
  type SessionSetup,
  sessionSetup,
} from "./session_options.ts";

/** The most a system prompt file may hold. */
const MAX_PROMPT_FILE_BYTES = 1024 * 1024;

/** What a run needs besides the prompt, checked before anything starts (usage errors exit 2). */
export interface PreparedRun {
  /** The session's options from the flags and the settings files. */
  setup: SessionSetup;
  model: string;
  /** The session options the flags add: the session to continue, the system prompt. */
  session: {
    resume?: { id: string; messages: Message[]; contextTokens?: number; stamp: TranscriptStamp };
    sessionId?: string;
    systemPrompt?: { replace?: string; append?: string };
  };
  /** What the user should know before the run starts (a settings file that was ignored). */
  notices: string[];
  /** What the user should know about the session continued (restored with gaps), once the run holds it. */
  resumeNotices: string[];
  /** With `--json-schema`: the answer must be an object valid against it. */
  answer: AnswerContract | null;
}

export async function prepareRun(
  workspace: Workspace,
  options: CliOptions,
  env: Record<string, string>,
): Promise<PreparedRun> {
  let setup = await sessionSetup(workspace, options, env);
  const notices: string[] = [...setup.notices];
  const resumeNotices: string[] = [];
  const answer = options.jsonSchema === null ? null : await answerContract(options.jsonSchema);
  const session: PreparedRun["session"] = {};
  const replace = await promptText("--system-prompt", options.systemPrompt.replace);
  const append = await promptText("--append-system-prompt", options.systemPrompt.append);
  if (replace !== null || append !== null) {
    session.systemPrompt = {
      ...(replace === null ? {} : { replace }),
      ...(append === null ? {} : { append }),
    };
  }
  const choice = options.session;
  switch (choice.kind) {
    case "new":
      if (choice.id !== null) session.sessionId = choice.id.toLowerCase();
      break;
    case "continue":
    case "resume": {
      const { sessionToContinue } = await lazyImport<typeof import("./session_resume.ts")>(
        new URL("./session_resume.ts", import.meta.url),
      );
      const resumed = await sessionToContinue(workspace, choice, env);
      // The recorded provider and model, unless the flags name others (then the history is converted).
      const continued = continuedSetup(setup, options, resumed);
      setup = continued.setup;
      session.resume = {
        id: resumed.id,
        messages: continued.messages,
        ...(resumed.contextTokens === null ? {} : { contextTokens: resumed.contextTokens }),
        stamp: resumed.stamp,
      };
      if (resumed.notice !== null) resumeNotices.push(resumed.notice);
      if (continued.notice !== null) resumeNotices.push(continued.notice);
      break;
    }
    case "pick":
      throw new UsageError(
        "-r without a session id needs a terminal to pick from: pass the id (mewcode sessions lists them)",
      );
    default:
      assertNever(choice);
  }
  requireModel(setup);
  requireEndpoint(setup, env);
  const model = setup.options.model;
  if (options.maxBudgetUsd !== null && priceOn(setup.provider.kind, model) === null) {
    throw new UsageError(
      `Cannot enforce --max-budget-usd: mewcode knows no price for the model "${model}" on the ` +
        `${setup.provider.kind} provider; use a model with a published price, or leave out --max-budget-usd`,
    );
  }
  return { setup, model, session, notices, resumeNotices, answer };
}

/** The structured-output contract of `--json-schema`, checked before any request. */
async function answerContract(schema: string): Promise<AnswerContract> {
  const { compileOutputSchema, repairPrompt, structuredOutputTool, validateOutput } = await lazyImport<
    typeof import("../agent/structured_output.ts")
  >(new URL("../agent/structured_output.ts", import.meta.url));
  // "@file" is relative to where the user typed the command, not to the workspace (-C).
  const compiled = await compileOutputSchema(schema, { cwd: Deno.cwd() });
  if (!compiled.ok) throw new UsageError(`Invalid --json-schema: ${compiled.message}`);
  return {
    tool: structuredOutputTool(compiled.schema),
    check: (input) => {
      const errors = validateOutput(compiled.validate, input);
      return errors === null ? null : repairPrompt(errors);
    },
  };
}

/** The text of `--system-prompt` / `--append-system-prompt` or of its `-file` variant. */
async function promptText(
  flag: string,
  given: { text: string } | { file: string } | null,
): Promise<string | null> {
  if (given === null) return null;
  if ("text" in given) return given.text;
  const cannot = (reason: string) => new UsageError(`Cannot read ${flag}-file "${given.file}": ${reason}`);
  let read: ReadUpTo;
  try {
    read = await readUpTo(given.file, MAX_PROMPT_FILE_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw cannot("no such file");
    if (error instanceof Deno.errors.PermissionDenied) throw cannot("permission denied");
    throw cannot(describeError(error));
  }
  if (read.status === "not-a-file") throw cannot("it is not a regular file or a pipe");
  if (read.status === "too-large") throw cannot(`it is larger than ${MAX_PROMPT_FILE_BYTES} bytes`);
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(read.bytes);
  } catch {
    throw new UsageError(`Cannot use ${flag}-file "${given.file}": it is not UTF-8 text`);
  }
}

/**
 * Finding and loading the session `-c` or `-r ID` (or /resume, or the picker) asks to continue: the one
 * place that turns a lookup into a conversation to continue, for one-shot and interactive runs alike.
 *
 * @module
 */
import { resolveMewcodeHome } from "../config/home.ts";
import type { Message } from "../llm/provider.ts";
import { loadSession, SessionLoadError } from "../session/load_session.ts";
import {
  findSession,
  latestSession,
  type SessionInfo,
  SessionLookupError,
  SessionNotFoundError,
} from "../session/session_index.ts";
import type { TranscriptStamp } from "../session/transcript.ts";
import type { Workspace } from "../session/workspace.ts";
import { UsageError } from "./args.ts";

/** A session to continue: its conversation and what it recorded. */
export interface ContinuedSession {
  id: string;
  messages: Message[];
  /** The conversation's size as of its last complete response, or null. */
  contextTokens: number | null;
  /** The provider and model it ran with, as recorded. */
  provider: string | null;
  model: string | null;
  /** What the user should know about the load (a torn last line), or null. */
  notice: string | null;
  /** What the transcript was when it was read (the run that continues it checks it is unchanged). */
  stamp: TranscriptStamp;
}

/**
 * The session `-c` (the latest of this workspace) or `-r ID` names, loaded. Usage errors (exit 2) for an
 * unknown, ambiguous or unreadable one, naming `mewcode sessions`.
 */
export async function sessionToContinue(
  workspace: Workspace,
  choice: { kind: "continue" } | { kind: "resume"; id: string },
  env: Record<string, string>,
): Promise<ContinuedSession> {
  const home = resolveMewcodeHome(env);
  let found: SessionInfo | null;
  try {
    found = choice.kind === "continue"
      ? await latestSession(home, workspace.root)
      : await findSessionAnyCase(home, workspace.root, choice.id);
  } catch (error) {
    if (error instanceof SessionLookupError) throw new UsageError(error.message);
    throw error;
  }
  if (found === null) {
    throw new UsageError(
      `No session to continue in "${workspace.root}": start one with mewcode -p "…" (mewcode sessions lists ` +
        "this workspace's sessions)",
    );
  }
  return await loadContinued(found);
}

/**
 * The session with this id or prefix, in any case: mewcode names sessions in lower case (`--session-id`
 * included), while `uuidgen` on macOS prints upper case, so `-r "$ID"` must find what `--session-id "$ID"`
 * made.
 */
async function findSessionAnyCase(home: string, root: string, id: string): Promise<SessionInfo> {
  try {
    return await findSession(home, root, id);
  } catch (error) {
    if (!(error instanceof SessionNotFoundError) || id.toLowerCase() === id) throw error;
    return await findSession(home, root, id.toLowerCase());
  }
}

/** Loads a listed session to continue it; a usage error when its transcript cannot be used. */
export async function loadContinued(info: SessionInfo): Promise<ContinuedSession> {
  try {
    const loaded = await loadSession(info.path);
    return {
      id: info.id,
      messages: loaded.messages,
      contextTokens: loaded.contextTokens,
      provider: loaded.provider,
      model: loaded.model,
      notice: loaded.notice,
      stamp: loaded.stamp,
    };
  } catch (error) {
    if (error instanceof SessionLoadError) {
      throw new UsageError(`${error.message}; run mewcode sessions to see the others`);
    }
    throw error;
  }
}

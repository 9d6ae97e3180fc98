/**
 * Rebuilds a session's conversation from its transcript: the reverse of the transcript writer.
 *
 * @module
 */
import { conversationTokens } from "../agent/conversation.ts";
import { type CallOutcome, Conversation } from "../agent/conversation.ts";
import { assertNever, describeError } from "../common/errors.ts";
import type { Message, Usage } from "../llm/provider.ts";
import { readTranscript, type TranscriptRecord, type TranscriptStamp } from "./transcript.ts";

/** What a transcript holds, ready to continue. */
export interface LoadedSession {
  sessionId: string | null;
  /** The workspace the session ran in, as recorded. */
  root: string | null;
  model: string | null;
  provider: string | null;
  messages: Message[];
  /** Model requests made in the session. */
  turns: number;
  /**
   * The conversation's size in tokens as of its last complete response (`conversationTokens`), for the
   * automatic compaction of the next run; null when unknown (no usage recorded since the last compaction).
   */
  contextTokens: number | null;
  /** Whether the last line was torn (a crash while writing) and skipped. */
  torn: boolean;
  /** What the transcript was as read: a run continuing it checks no other run wrote to it since. */
  stamp: TranscriptStamp;
  /** What a person should know about the load (a torn line, calls answered for a crashed run); null if none. */
  notice: string | null;
}

/** Why a transcript cannot be loaded. */
export class SessionLoadError extends Error {
  override name = "SessionLoadError";
}

/**
 * Reads a transcript and rebuilds the conversation. Tolerates a torn last line (and says so); throws
 * SessionLoadError for an empty file, an unreadable line, an unknown record type, or records that do not
 * form a valid conversation.
 */
export async function loadSession(path: string): Promise<LoadedSession> {
  let read: { records: TranscriptRecord[]; torn: boolean; stamp: TranscriptStamp };
  try {
    read = await readTranscript(path);
  } catch (error) {
    throw new SessionLoadError(`Cannot load the session "${path}": ${describeError(error)}`, {
      cause: error,
    });
  }
  return { ...rebuildSession(read.records, { torn: read.torn, path }), stamp: read.stamp };
}

/** Rebuilds the conversation from records already read (`path` only names the file in messages). */
function rebuildSession(
  records: readonly TranscriptRecord[],
  options: { torn: boolean; path: string },
): Omit<LoadedSession, "stamp"> {
  if (records.length === 0) {
    throw new SessionLoadError(`Cannot load the session "${options.path}": the transcript holds no records`);
  }
  const conversation = new Conversation();
  const loaded: Omit<LoadedSession, "messages" | "notice" | "stamp"> = {
    sessionId: null,
    root: null,
    model: null,
    provider: null,
    turns: 0,
    contextTokens: null,
    torn: options.torn,
  };
  // A complete response's usage record comes just before its assistant-message record.
  let lastUsage: Usage | null = null;
  // The calls of the latest assistant message that started, and those that ended (with their results).
  const started = new Set<string>();
  const ended = new Map<string, CallOutcome>();
  records.forEach((record, index) => {
    try {
      switch (record.type) {
        case "session-start":
          loaded.sessionId ??= record.sessionId;
          loaded.root ??= record.root;
          loaded.model = record.model;
          loaded.provider = record.provider ?? null;
          return;
        case "user-message":
          conversation.addUserText(record.content);
          return;
        case "assistant-message":
          loaded.turns += 1;
          started.clear();
          ended.clear();
          conversation.addAssistant(record.content);
          if (!record.partial && lastUsage !== null) loaded.contextTokens = conversationTokens(lastUsage);
          return;
        case "tool-results":
          conversation.addUserContent(record.content);
          return;
        case "compaction":
          // The whole conversation from here on: what came before is in its summary.
          conversation.replace(record.messages);
          loaded.contextTokens = null;
          lastUsage = null;
          return;
        case "usage":
          lastUsage = record.usage;
          return;
        // What a run killed before its tool-results record did with each call (see `answerUnfinished`).
        case "tool-call-start":
          started.add(record.id);
          return;
        case "tool-call-end":
          ended.set(record.id, { content: record.content, isError: record.isError });
          return;
        // Records for people and tools reading the log; the conversation is rebuilt from the ones above.
        case "request":
        case "retry":
        case "warning":
        case "error":
        case "turn-end":
          return;
        default:
          return assertNever(record);
      }
    } catch (error) {
      throw new SessionLoadError(
        `Cannot load the session "${options.path}": record ${index + 1} (${record.type}) does not fit the ` +
          `conversation: ${describeError(error)}`,
      );
    }
  });
  const notices: string[] = [];
  if (options.torn) {
    // Continuing the session drops the torn bytes from the file too (Transcript.create), before it appends.
    notices.push("its last line was cut off (the session ended while writing it) and was dropped");
  }
  notices.push(...answerUnfinished(conversation, { started, ended }));
  return {
    ...loaded,
    messages: conversation.messages,
    notice: notices.length === 0
      ? null
      : `The session "${options.path}" was restored, but ${notices.join("; ")}`,
  };
}

/**
 * Answers the tool uses a killed run left without results: a call that ended gets the result it recorded;
 * one that started but never ended may have changed things, so the model is told to check before repeating
 * it (its start is recorded before the permission gate, so it may also have been awaiting approval); only
 * one that never started "was not run". Returns what a person should know about them.
 */
function answerUnfinished(
  conversation: Conversation,
  calls: { started: ReadonlySet<string>; ended: ReadonlyMap<string, CallOutcome> },
): string[] {
  const pending = conversation.pendingToolUses();
  if (pending.length === 0) return [];
  const interrupted = pending.filter((block) => calls.started.has(block.id) && !calls.ended.has(block.id));
  const unrun = pending.filter((block) => !calls.started.has(block.id) && !calls.ended.has(block.id));
  conversation.addToolResults(calls.ended, {
    missing: (block) => ({
      content: calls.started.has(block.id)
        ? `${block.name} started, but the session ended before it finished, so its effects are unknown: ` +
          "check the files or state it would change before running it again"
        : `${block.name} was not run: the session ended before it ran`,
      isError: true,
    }),
  });
  const notices: string[] = [];
  if (interrupted.length > 0) {
    const count = countCalls(interrupted.length);
    notices.push(`${count} of its last turn started but never finished (its effects are unknown)`);
  }
  if (unrun.length > 0) notices.push(`${countCalls(unrun.length)} of its last turn never ran`);
  return notices;
}

function countCalls(count: number): string {
  return `${count} tool call${count === 1 ? "" : "s"}`;
}

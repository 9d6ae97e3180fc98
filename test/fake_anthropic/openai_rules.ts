/**
 * The request rules the fake chat completions server enforces, modelled on OpenAI's 400 answers (and on
 * what mewcode promises to send), so a client that sends an invalid conversation fails loudly in tests:
 *
 * - `model` is a non-empty string; `stream` is true with `stream_options.include_usage` true; at most one
 *   of `max_tokens` / `max_completion_tokens`, a positive integer;
 * - `tools` (if present) are `{type: "function", function: {name, parameters: {type: "object"}}}` with
 *   names of letters, digits, `_` and `-` (at most 64);
 * - `messages` is non-empty; roles are system, user, assistant, tool; a system message only comes first;
 *   the first message after it is from the user; user content is a non-empty string;
 * - an assistant message has non-empty text or tool calls; each tool call has a unique id, type
 *   `function`, a name, and `arguments` that are the JSON text of an object;
 * - the tool calls of an assistant message are answered right after it by `role: "tool"` messages, one
 *   per call, in the calls' order, each with its call's `tool_call_id` and string content; a tool message
 *   anywhere else is an error; a conversation may not end with unanswered calls.
 *
 * @module
 */

/** Returns an OpenAI-style error message for the first broken rule, or null when the request is valid. */
export function checkChatRequest(body: unknown): string | null {
  if (!isRecord(body)) return "Request body must be a JSON object";
  if (typeof body.model !== "string" || body.model === "") return "you must provide a model parameter";
  if (body.stream !== true) {
    return "The fake chat completions server only answers streaming requests (stream: true)";
  }
  if (!isRecord(body.stream_options) || body.stream_options.include_usage !== true) {
    return "stream_options.include_usage must be true: mewcode needs the usage chunk";
  }
  const limits = ["max_tokens", "max_completion_tokens"].filter((field) => body[field] !== undefined);
  if (limits.length > 1) return "Send max_tokens or max_completion_tokens, not both";
  for (const field of limits) {
    const value = body[field];
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
      return `Invalid '${field}': expected a positive integer`;
    }
  }
  if (body.tools !== undefined) {
    const problem = checkTools(body.tools);
    if (problem !== null) return problem;
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return "Invalid 'messages': empty array. Expected an array with minimum length 1";
  }
  return checkMessages(body.messages);
}

function checkTools(tools: unknown): string | null {
  if (!Array.isArray(tools)) return "Invalid 'tools': expected an array";
  for (const [index, tool] of tools.entries()) {
    if (!isRecord(tool) || tool.type !== "function" || !isRecord(tool.function)) {
      return `Invalid 'tools[${index}]': expected {type: "function", function: {...}}`;
    }
    const name = tool.function.name;
    if (typeof name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      return `Invalid 'tools[${index}].function.name': string does not match pattern`;
    }
    const parameters = tool.function.parameters;
    if (!isRecord(parameters) || parameters.type !== "object") {
      return `Invalid schema for function '${name}': schema must be a JSON Schema of 'type: "object"'`;
    }
  }
  return null;
}

function checkMessages(messages: unknown[]): string | null {
  const seenIds = new Set<string>();
  /** The ids the next tool messages must answer, in order. */
  let awaiting: string[] = [];
  let firstAfterSystem = true;
  for (const [index, message] of messages.entries()) {
    const at = `messages[${index}]`;
    if (!isRecord(message)) return `Invalid '${at}': expected an object`;
    const role = message.role;
    if (awaiting.length > 0 && role !== "tool") {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each ` +
        `'tool_call_id'. The following tool_call_ids did not have response messages: ${awaiting.join(", ")}`;
    }
    switch (role) {
      case "system":
        if (index !== 0) return `Invalid '${at}': a system message may only come first`;
        if (typeof message.content !== "string" || message.content === "") {
          return `Invalid '${at}.content': expected a non-empty string`;
        }
        continue;
      case "user":
        if (typeof message.content !== "string" || message.content === "") {
          return `Invalid '${at}.content': expected a non-empty string`;
        }
        break;
      case "assistant": {
        if (firstAfterSystem) return `Invalid '${at}': the conversation must start with a user message`;
        const problem = checkAssistant(message, at, seenIds);
        if (typeof problem === "string") return problem;
        awaiting = problem;
        break;
      }
      case "tool": {
        const expected = awaiting.shift();
        if (expected === undefined) {
          return `Invalid parameter: messages with role 'tool' must be a response to a preceding message ` +
            `with 'tool_calls' (${at})`;
        }
        if (message.tool_call_id !== expected) {
          return `Invalid '${at}.tool_call_id': expected "${expected}" (the calls' order), got ` +
            JSON.stringify(message.tool_call_id);
        }
        if (typeof message.content !== "string") return `Invalid '${at}.content': expected a string`;
        break;
      }
      default:
        return `Invalid '${at}.role': ${JSON.stringify(role)} is not one of system, user, assistant, tool`;
    }
    firstAfterSystem = false;
  }
  if (awaiting.length > 0) return `The conversation ends with unanswered tool calls: ${awaiting.join(", ")}`;
  return null;
}

/** The ids of an assistant message's tool calls, or the problem with it. */
function checkAssistant(
  message: Record<string, unknown>,
  at: string,
  seenIds: Set<string>,
): string[] | string {
  const content = message.content ?? null;
  if (content !== null && typeof content !== "string") {
    return `Invalid '${at}.content': expected a string or null`;
  }
  const calls = message.tool_calls ?? [];
  if (!Array.isArray(calls)) return `Invalid '${at}.tool_calls': expected an array`;
  if ((content === null || content === "") && calls.length === 0) {
    return `Invalid '${at}': an assistant message needs content or tool_calls`;
  }
  const ids: string[] = [];
  for (const [index, call] of calls.entries()) {
    const where = `${at}.tool_calls[${index}]`;
    if (!isRecord(call) || call.type !== "function" || !isRecord(call.function)) {
      return `Invalid '${where}': expected {id, type: "function", function: {name, arguments}}`;
    }
    if (typeof call.id !== "string" || call.id === "") {
      return `Invalid '${where}.id': expected a non-empty string`;
    }
    if (seenIds.has(call.id)) return `Duplicate tool call id "${call.id}" (${where})`;
    seenIds.add(call.id);
    if (typeof call.function.name !== "string" || call.function.name === "") {
      return `Invalid '${where}.function.name': expected a non-empty string`;
    }
    const args = call.function.arguments;
    if (typeof args !== "string") return `Invalid '${where}.function.arguments': expected a string`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      return `Invalid '${where}.function.arguments': not valid JSON`;
    }
    if (!isRecord(parsed)) return `Invalid '${where}.function.arguments': expected a JSON object`;
    ids.push(call.id);
  }
  return ids;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

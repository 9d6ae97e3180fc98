/**
 * The request rules the fake Anthropic server enforces, modelled on the real API's 400 answers, so a client
 * that sends an invalid conversation fails loudly in tests instead of passing against a lenient fake:
 *
 * - `model` is a non-empty string, `max_tokens` a positive integer, `messages` a non-empty array whose
 *   first message has role `user`; `system` (if present) a string or an array of non-empty text blocks;
 *   `tools` (if present) an array of `{name, input_schema: {type: "object"}}`.
 * - Text blocks are non-empty; string content is non-empty.
 * - Prompt caching: `cache_control` is `{type: "ephemeral"}` with an optional `ttl` of "5m" or "1h" and
 *   nothing else; it may be on a tool, a system block or a message block other than thinking and
 *   redacted_thinking; at most 4 in a request; a "1h" one never after a "5m" one (tools, system, messages
 *   order). {@link cacheBreakpoints} lists where they are, for tests.
 * - Every tool_use id is unique, and is answered by exactly one tool_result in the NEXT message, which is a
 *   user message whose content starts with its tool_results; a tool_result answers a tool_use of the
 *   previous (assistant) message. A conversation may not end with unanswered tool_use blocks.
 *
 * @module
 */

/** Returns the API-style error message for the first broken rule, or null when the request is valid. */
export function checkMessagesRequest(body: unknown): string | null {
  if (!isRecord(body)) return "Request body must be a JSON object";
  if (typeof body.model !== "string" || body.model === "") return "model: Field required";
  if (typeof body.max_tokens !== "number" || !Number.isInteger(body.max_tokens) || body.max_tokens < 1) {
    return "max_tokens: Input should be a positive integer";
  }
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system)) {
    return "system: Input should be a valid string or list of blocks";
  }
  if (Array.isArray(body.system)) {
    for (const [index, block] of body.system.entries()) {
      if (!isRecord(block) || block.type !== "text") return `system.${index}.type: Input should be 'text'`;
      if (typeof block.text !== "string" || block.text === "") {
        return `system.${index}.text: text content blocks must be non-empty`;
      }
    }
  }
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "tools: Input should be a valid list";
    for (const [index, tool] of body.tools.entries()) {
      if (!isRecord(tool) || typeof tool.name !== "string" || tool.name === "") {
        return `tools.${index}.name: Field required`;
      }
      if (!isRecord(tool.input_schema) || tool.input_schema.type !== "object") {
        return `tools.${index}.input_schema.type: Input should be 'object'`;
      }
    }
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return "messages: at least one message is required";
  }
  return checkMessages(body.messages) ?? checkCacheControl(body);
}

/**
 * Where a request body carries `cache_control`, in the API's processing order, as paths such as
 * `tools.2`, `system.0` and `messages.4.content.1`.
 */
export function cacheBreakpoints(body: unknown): string[] {
  return cacheControls(body).map(({ path }) => path);
}

/** Every block of the body that may carry `cache_control` (and thinking blocks, which may not). */
function cacheControls(body: unknown): { path: string; value: unknown; blockType: unknown }[] {
  if (!isRecord(body)) return [];
  const found: { path: string; value: unknown; blockType: unknown }[] = [];
  const visit = (path: string, block: unknown) => {
    if (isRecord(block) && block.cache_control != null) {
      found.push({ path, value: block.cache_control, blockType: block.type });
    }
  };
  if (Array.isArray(body.tools)) body.tools.forEach((tool, index) => visit(`tools.${index}`, tool));
  if (Array.isArray(body.system)) body.system.forEach((block, index) => visit(`system.${index}`, block));
  if (Array.isArray(body.messages)) {
    for (const [index, message] of body.messages.entries()) {
      if (!isRecord(message) || !Array.isArray(message.content)) continue;
      message.content.forEach((block, blockIndex) => visit(`messages.${index}.content.${blockIndex}`, block));
    }
  }
  return found;
}

const MAX_CACHE_BREAKPOINTS = 4;

function checkCacheControl(body: Record<string, unknown>): string | null {
  const controls = cacheControls(body);
  let seenFiveMinutes = false;
  for (const { path, value, blockType } of controls) {
    if (blockType === "thinking" || blockType === "redacted_thinking") {
      return `${path}.${blockType}.cache_control: Extra inputs are not permitted`;
    }
    if (!isRecord(value)) return `${path}.cache_control: Input should be a valid dictionary or object`;
    if (value.type !== "ephemeral") return `${path}.cache_control.type: Input should be 'ephemeral'`;
    const extra = Object.keys(value).find((key) => key !== "type" && key !== "ttl");
    if (extra !== undefined) return `${path}.cache_control.${extra}: Extra inputs are not permitted`;
    if (value.ttl !== undefined && value.ttl !== "5m" && value.ttl !== "1h") {
      return `${path}.cache_control.ttl: Input should be '5m' or '1h'`;
    }
    if (value.ttl === "1h" && seenFiveMinutes) {
      return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that " +
        "the order of processing is: 'tools', 'system', then 'messages'.";
    }
    if (value.ttl !== "1h") seenFiveMinutes = true;
  }
  if (controls.length > MAX_CACHE_BREAKPOINTS) {
    return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. ` +
      `Found ${controls.length}.`;
  }
  return null;
}

function checkMessages(messages: unknown[]): string | null {
  const seenToolUseIds = new Set<string>();
  let pending: string[] = [];
  for (const [index, message] of messages.entries()) {
    const where = `messages.${index}`;
    if (!isRecord(message) || (message.role !== "user" && message.role !== "assistant")) {
      return `${where}.role: Input should be 'user' or 'assistant'`;
    }
    if (index === 0 && message.role !== "user") return `${where}: the first message must use the "user" role`;
    const blocks = contentBlocks(message.content);
    if (typeof blocks === "string") return `${where}.${blocks}`;
    for (const [blockIndex, block] of blocks.entries()) {
      if (block.type === "text" && (typeof block.text !== "string" || block.text === "")) {
        return `${where}.content.${blockIndex}.text: text content blocks must be non-empty`;
      }
    }
    const results = blocks.filter((block) => block.type === "tool_result");
    if (pending.length > 0) {
      const answered = new Set<string>();
      for (const [blockIndex, block] of blocks.entries()) {
        if (block.type !== "tool_result") continue;
        const id = String(block.tool_use_id);
        if (blockIndex >= results.length) {
          return `${where}.content.${blockIndex}: tool_result blocks must come first in the user message content`;
        }
        if (answered.has(id)) {
          return `${where}.content.${blockIndex}: duplicate tool_result for tool_use id ${id}`;
        }
        answered.add(id);
      }
      const missing = pending.filter((id) => !answered.has(id));
      if (message.role !== "user" || missing.length > 0) {
        return `messages.${
          index - 1
        }: \`tool_use\` ids were found without \`tool_result\` blocks immediately ` +
          `after: ${
            (message.role !== "user" ? pending : missing).join(", ")
          }. Each \`tool_use\` block must have a ` +
          "corresponding `tool_result` block in the next message.";
      }
    }
    const unexpected = results.map((block) => String(block.tool_use_id)).filter((id) =>
      !pending.includes(id)
    );
    if (unexpected.length > 0) {
      return `${where}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${
        unexpected.join(", ")
      }. ` +
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message.";
    }
    pending = [];
    for (const block of blocks) {
      if (block.type !== "tool_use") continue;
      if (message.role !== "assistant") {
        return `${where}: tool_use blocks may only appear in assistant messages`;
      }
      const id = String(block.id);
      if (seenToolUseIds.has(id)) return `${where}: \`tool_use\` ids must be unique: ${id}`;
      seenToolUseIds.add(id);
      pending.push(id);
    }
  }
  if (pending.length > 0) {
    return `messages.${messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks ` +
      `immediately after: ${pending.join(", ")}. Each \`tool_use\` block must have a corresponding ` +
      "`tool_result` block in the next message.";
  }
  return null;
}

/** The content as blocks, or an error path suffix. */
function contentBlocks(content: unknown): Record<string, unknown>[] | string {
  if (typeof content === "string") {
    return content === "" ? "content: must be non-empty" : [{ type: "text", text: content }];
  }
  if (!Array.isArray(content)) return "content: Input should be a valid string or list";
  if (content.length === 0) return "content: all messages must have non-empty content";
  const blocks: Record<string, unknown>[] = [];
  for (const [index, block] of content.entries()) {
    if (!isRecord(block) || typeof block.type !== "string") return `content.${index}.type: Field required`;
    blocks.push(block);
  }
  return blocks;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The tool registry: which tools exist, which are enabled, and what the API is told.
 *
 * @module
 */
import type { AnyTool, InputJsonSchema, ToolInfo } from "./tool.ts";

/** One tool as offered to the model, in mewcode's provider-neutral shape (each provider converts it). */
export interface OfferedTool {
  name: string;
  description: string;
  inputSchema: InputJsonSchema;
}

/**
 * Holds tools by name; a disabled tool stays registered but is not offered or callable. The tools are
 * whole (AnyTool, for the pipeline) or only described (ToolInfo, for a session that has not loaded them).
 */
export class ToolRegistry<T extends ToolInfo = AnyTool> {
  #tools = new Map<string, T>();
  #disabled = new Set<string>();

  /** Adds a tool; a second tool with the same name is a programming error. */
  register(tool: T): void {
    if (this.#tools.has(tool.name)) {
      throw new TypeError(`Cannot register tool "${tool.name}": a tool with that name is already registered`);
    }
    this.#tools.set(tool.name, tool);
  }

  /** Enables a registered tool; returns false if no tool has that name. */
  enable(name: string): boolean {
    if (!this.#tools.has(name)) return false;
    this.#disabled.delete(name);
    return true;
  }

  /** Disables a registered tool; returns false if no tool has that name. */
  disable(name: string): boolean {
    if (!this.#tools.has(name)) return false;
    this.#disabled.add(name);
    return true;
  }

  /** The enabled tool with this name, or undefined. */
  get(name: string): T | undefined {
    if (this.#disabled.has(name)) return undefined;
    return this.#tools.get(name);
  }

  /** Whether a tool with this name is registered and enabled. */
  isEnabled(name: string): boolean {
    return this.#tools.has(name) && !this.#disabled.has(name);
  }

  /** Every enabled tool, in registration order. */
  listEnabled(): T[] {
    return [...this.#tools.values()].filter((tool) => !this.#disabled.has(tool.name));
  }

  /** Names of the enabled tools, in registration order. */
  enabledNames(): string[] {
    return this.listEnabled().map((tool) => tool.name);
  }

  /** The enabled tools as offered to the model: name, description and the JSON Schema of the input. */
  toolSpecs(): OfferedTool[] {
    return this.listEnabled().map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.jsonSchema,
    }));
  }
}

/** Which classes of tools a session may use. */
export interface ToolSetup {
  /** Register WriteFile and EditFile. */
  allowWrite: boolean;
  /** Register Bash. */
  allowBash: boolean;
}

/**
 * Builds a registry from a tool list and a setup: read-only tools always; non-destructive writers only
 * with `allowWrite`; destructive tools (the shell) only with `allowBash`.
 */
export function createRegistry<T extends ToolInfo>(tools: readonly T[], setup: ToolSetup): ToolRegistry<T> {
  const registry = new ToolRegistry<T>();
  for (const tool of tools) {
    if (tool.isReadOnly()) registry.register(tool);
    else if (tool.isDestructive()) {
      if (setup.allowBash) registry.register(tool);
    } else if (setup.allowWrite) registry.register(tool);
  }
  return registry;
}

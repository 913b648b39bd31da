// Tool categories: how the system prompt groups tool definitions for the model (Decision 5).
import type { Category } from "../category";

/** The one Category type (workflows use it too), as the tools name it. */
export type ToolCategory = Category;

export const TOOL_CATEGORIES: readonly ToolCategory[] = [
  {
    id: "session",
    name: "Session",
    description: "Inspect and change how this agent session works (its mode).",
    order: 10,
  },
  {
    id: "general",
    name: "General",
    description: "Small helpers that do not touch the user's data.",
    order: 20,
  },
  {
    id: "memory",
    name: "Memory",
    description: "What the person told you in earlier conversations: save, search and forget facts about them.",
    order: 25,
  },
  {
    id: "workspace",
    name: "Workspace",
    description: "The user's files, read and written by the user's own client (IDE or console).",
    order: 30,
  },
  {
    id: "history",
    name: "History",
    description: "The user's earlier conversations, searched by their words.",
    order: 40,
  },
];

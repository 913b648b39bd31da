// CategoryRegistry: how workflows are grouped in the console's WorkflowSelector (Decision 5).
import type { Category } from "../category";

/** The one Category type (tools use it too), as the workflows name it. */
export type WorkflowCategory = Category;

export class CategoryRegistry {
  private readonly byId = new Map<string, WorkflowCategory>();

  register(category: WorkflowCategory): void {
    if (this.byId.has(category.id)) throw new Error(`Workflow category '${category.id}' is already registered.`);
    this.byId.set(category.id, category);
  }

  get(id: string): WorkflowCategory | undefined {
    return this.byId.get(id);
  }

  /** In display order. */
  list(): WorkflowCategory[] {
    return [...this.byId.values()].sort((a, b) => a.order - b.order || a.id.localeCompare(b.id));
  }
}

export const WORKFLOW_CATEGORIES: readonly WorkflowCategory[] = [
  { id: "session", name: "Session", description: "Change how this session works, or start a related one.", order: 10 },
  { id: "documents", name: "Documents", description: "Create documents kept with the session.", order: 20 },
];

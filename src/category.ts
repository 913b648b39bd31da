// A category (design document, Decision 5): tools are grouped by one in the system prompt, workflows in the console.
export interface Category {
  id: string;
  name: string;
  description: string;
  /** Lower comes first. */
  order: number;
}

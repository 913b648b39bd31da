// WorkflowService: the registry of workflows defined in code (one a file), their categories and schemas.
import { z } from "zod";
import { quoted } from "../quote";
import { fieldMessage, firstProblem } from "../zod-issues";
import { branchSessionWorkflow } from "./branch-session";
import { CategoryRegistry, WORKFLOW_CATEGORIES } from "./categories";
import { draftDdrWorkflow } from "./draft-ddr";
import { extractParameters } from "./parameter-extraction";
import { switchModeWorkflow } from "./switch-mode";
import type { Workflow } from "./workflow";

export interface WorkflowDescription {
  id: string;
  name: string;
  description: string;
  category: string;
  /** JSON schema of the parameters: what a form is built from. */
  parameters: Record<string, unknown>;
}

export type ParsedWorkflowParameters =
  | { ok: true; parameters: Record<string, unknown> }
  | { ok: false; message: string; param: string | null };

export class WorkflowService {
  private readonly byId = new Map<string, Workflow>();
  readonly categories = new CategoryRegistry();

  constructor(workflows: readonly Workflow[], categories = WORKFLOW_CATEGORIES) {
    for (const category of categories) this.categories.register(category);
    for (const workflow of workflows) {
      if (this.byId.has(workflow.id)) throw new Error(`Workflow '${workflow.id}' is registered twice.`);
      if (!this.categories.get(workflow.category))
        throw new Error(`Workflow '${workflow.id}' has an unknown category.`);
      this.byId.set(workflow.id, workflow);
    }
  }

  get(id: string): Workflow | undefined {
    return this.byId.get(id);
  }

  describe(workflow: Workflow): WorkflowDescription {
    const { $schema: _ignored, ...parameters } = z.toJSONSchema(workflow.parameters, { io: "input" }) as Record<
      string,
      unknown
    >;
    return {
      id: workflow.id,
      name: workflow.name,
      description: workflow.description,
      category: workflow.category,
      parameters,
    };
  }

  list(): WorkflowDescription[] {
    return [...this.byId.values()].map((w) => this.describe(w));
  }

  /** Checks `parameters`, or extracts them from the user's words in `input`; names the field at fault. */
  parse(workflow: Workflow, body: { parameters?: Record<string, unknown>; input?: string }): ParsedWorkflowParameters {
    let raw: Record<string, unknown> = body.parameters ?? {};
    if (body.input !== undefined) {
      const extracted = extractParameters(body.input, workflow.parameters, workflow.positional);
      if (!extracted.ok) return extracted;
      raw = extracted.parameters;
    }
    // Every key must be the schema's own: `__proto__`, `constructor` and `prototype` are unknown like any
    // other (zod would drop an own `__proto__` silently, and `in` finds the others on Object.prototype).
    const shape = workflow.parameters.shape as Record<string, unknown>;
    const unknown = Object.keys(raw).find((key) => !Object.hasOwn(shape, key));
    if (unknown !== undefined) {
      return {
        ok: false,
        message: `Unknown parameter ${quoted(unknown)}. Parameters: ${Object.keys(shape).join(", ")}.`,
        param: unknown,
      };
    }
    const parsed = workflow.parameters.safeParse(raw);
    if (parsed.success) return { ok: true, parameters: parsed.data };
    const problem = firstProblem(parsed.error);
    return { ok: false, message: fieldMessage(problem, "parameters"), param: problem.param };
  }
}

export const PRODUCTION_WORKFLOWS: readonly Workflow[] = [switchModeWorkflow, branchSessionWorkflow, draftDdrWorkflow];

export const workflowService = new WorkflowService(PRODUCTION_WORKFLOWS);

// Workflows: actions a user invokes (the design document's Decision 3), never shown to the model.
import type { z } from "zod";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import type { Artifact } from "../wire/session";

/** What a workflow can do to the session it runs in. */
export interface WorkflowContext {
  sessionId: string;
  org: string;
  user: string;
  mode: string;
  catalog: AgentModeCatalogService;
  setMode(mode: string, reason: string): Promise<void>;
  createBranch(mode: string): Promise<string>;
  saveArtifact(artifact: Omit<Artifact, "id" | "createdAt">): Artifact;
}

export interface WorkflowResult {
  /** One sentence for the user and, in the conversation, for the model. */
  message: string;
  data: Record<string, unknown>;
}

export interface Workflow<S extends z.ZodObject = z.ZodObject> {
  id: string;
  name: string;
  description: string;
  category: string;
  parameters: S;
  /** The parameter a first positional word fills when parameters come from the user's own words. */
  positional?: keyof z.output<S> & string;
  run(parameters: z.output<S>, context: WorkflowContext): Promise<WorkflowResult>;
}

/** A refusal a user can act on; `param` names the parameter at fault. */
export class WorkflowError extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "WorkflowError";
  }
}

/** Keeps a workflow's parameter type while it is stored beside others. */
export function defineWorkflow<S extends z.ZodObject>(workflow: Workflow<S>): Workflow {
  return workflow as unknown as Workflow;
}

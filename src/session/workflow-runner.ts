// Runs a workflow inside the session object, under the one-turn-at-a-time rule, and records it in the
// conversation so the model sees what the user did.

import type { SessionIdentity, TurnState } from "../agent/turn-store";
import type { AgentModeCatalogService } from "../modes/catalog-service";
import { type Outcome, refuse, workflowNotFound } from "../refusal";
import { SessionModeError } from "../tools/session-manager";
import type { Artifact, WorkflowRunResponse } from "../wire/session";
import { workflowService } from "../workflows";
import { WorkflowError } from "../workflows/workflow";
import type { SessionStore } from "./session-store";
import type { Admission } from "./turn-admission";

export interface WorkflowRunDeps {
  store: SessionStore;
  catalog: AgentModeCatalogService;
  /** The session's admission (busy, or waiting on approvals or tool results, refuses); it holds the session. */
  admit(): Promise<Outcome<Admission>>;
  setMode(identity: SessionIdentity, mode: string, reason: string, turnId: string): Promise<void>;
  createBranch(mode: string): Promise<string>;
}

export async function runWorkflow(
  deps: WorkflowRunDeps,
  workflowId: string,
  /** Parsed once, by the Worker's route, with the workflow's own schema: run as they are. */
  parameters: Record<string, unknown>,
): Promise<Outcome<WorkflowRunResponse>> {
  const workflow = workflowService.get(workflowId);
  if (!workflow) return workflowNotFound(workflowId);
  const admitted = await deps.admit();
  if (!admitted.ok) return admitted;

  const identity = deps.store.identity();
  const turn: TurnState = {
    turnId: crypto.randomUUID(),
    startedAt: Date.now(),
    iterations: 0,
    parseFailures: 0,
    batch: null,
  };
  deps.store.saveTurn("running", turn);
  // The turn holds the session now (its `running` in storage).
  admitted.value.release();
  try {
    const result = await workflow.run(parameters, {
      ...identity,
      catalog: deps.catalog,
      setMode: (mode, reason) => deps.setMode(identity, mode, reason, turn.turnId),
      createBranch: (mode) => deps.createBranch(mode),
      saveArtifact: (artifact): Artifact => deps.store.saveArtifact(artifact),
    });
    deps.store.appendMessage({
      turnId: turn.turnId,
      role: "user",
      kind: "workflow",
      content: `[workflow] I ran "${workflow.name}" (${workflow.id}) with ${JSON.stringify(parameters)}. ${result.message}`,
    });
    return {
      ok: true,
      value: {
        sessionId: identity.sessionId,
        workflowId,
        mode: deps.store.identity().mode,
        message: result.message,
        data: result.data,
      },
    };
  } catch (error) {
    if (error instanceof WorkflowError) {
      return refuse("invalid_workflow_parameters", error.message, { param: error.param });
    }
    // The session refused the change of mode itself (pinned to a mode version): the mode asked for is what is wrong.
    if (error instanceof SessionModeError) {
      return refuse("invalid_workflow_parameters", error.message, { param: "mode" });
    }
    throw error;
  } finally {
    deps.store.saveTurn("idle", null);
  }
}

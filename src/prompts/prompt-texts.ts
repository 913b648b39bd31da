// Fixed instruction texts the enhancer adds: the strict JSON tool-call format (Decision 1) and diagrams.

/** The design document's Decision 1, "System Prompt Instruction", word for word. */
export const JSON_TOOL_CALL_INSTRUCTIONS = `When you need to use a tool, output ONLY a JSON object in this exact format:
{
  "tool": "tool_name",
  "parameters": { "param1": "value1", "param2": "value2" },
  "terminate": true
}

Set "terminate" to false if you need to continue working after the tool result.
Set "terminate" to true if this is your final action or you want to return a response to the user.`;

export const MERMAID_INSTRUCTIONS = `When a diagram makes an answer clearer (a sequence of calls, a flow, a state machine, an architecture), draw it in Mermaid inside a fenced code block marked \`\`\`mermaid. Use one of: flowchart TD, sequenceDiagram, stateDiagram-v2, classDiagram, erDiagram. Keep a diagram small (at most about 15 nodes), quote labels that contain punctuation, and add one sentence before it saying what it shows. Do not draw a diagram for a simple answer.`;

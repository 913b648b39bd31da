// draft_ddr: a design decision record skeleton in the structure the documents in shared/spec share,
// kept as an artifact of the session.
import { z } from "zod";
import { typedName, typedProse } from "../typed-name";
import { defineWorkflow } from "./workflow";

function skeleton(p: { id: string; title: string; owner: string; purpose: string }): string {
  return `# ${p.id} — ${p.title}

**ID:** ${p.id}  
**Title:** ${p.title}  
**Status:** Draft  
**Owner:** ${p.owner}  

## Approval Metadata

- **Approved By:** (pending)  
- **Approval Timestamp:** (pending)

---

## 1. Purpose

${p.purpose || "What this record decides, and why it is needed now."}

---

## 2. Scope and Non-Goals

This DDR **does** define:

- 

This DDR **does not** define:

- 

---

## 3. Contract

### 3.1 Identity and Availability

### 3.2 Arguments

### 3.3 Validation Rules (exact error messages)

### 3.4 Result

---

## 4. Runtime Semantics and Usage Guidance

---

## 5. Reference Implementation (Informative)

---

## 6. Testing Requirements

At minimum, the following tests are required:

1. **Happy Path**
2. **Validation Failures**
3. **Exception Handling**
`;
}

export const draftDdrWorkflow = defineWorkflow({
  id: "draft_ddr",
  name: "Draft DDR",
  description:
    "Create a design decision record skeleton (ID, title, status, approval metadata, purpose, scope, contract, testing).",
  category: "documents",
  positional: "id",
  parameters: z.strictObject({
    id: z
      .string()
      .regex(/^[A-Z]{2,5}-\d{3,4}$/, "must look like TUL-012 (letters, a hyphen, digits)")
      .describe("The record's ID, for example TUL-012."),
    title: z
      .string()
      .trim()
      .min(3, "must have at least 3 characters")
      .max(200)
      .superRefine(typedName)
      .describe("The record's title."),
    owner: z
      .string()
      .trim()
      .max(200)
      .superRefine(typedName)
      .optional()
      .describe("Who owns the record (defaults to you)."),
    purpose: z
      .string()
      .trim()
      .max(4_000)
      .superRefine(typedProse)
      .optional()
      .describe("A first sentence or two for the Purpose section."),
  }),
  async run(parameters, context) {
    const content = skeleton({
      ...parameters,
      owner: parameters.owner || context.user,
      purpose: parameters.purpose ?? "",
    });
    const artifact = context.saveArtifact({ kind: "ddr", title: `${parameters.id} — ${parameters.title}`, content });
    return {
      message: `Drafted ${artifact.title} as artifact ${artifact.id}.`,
      data: { artifactId: artifact.id, title: artifact.title },
    };
  },
});

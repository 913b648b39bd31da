// /admin/users (admin scope): the people of the admin's org, most recently seen first, and disabling one: their
// keys are refused, their browser sessions end (and their MCP clients' OAuth grants), at once in this isolate and
// within AUTH_CACHE_TTL_MS everywhere, as a revoked key. Disabled with `forget`, their memories go in the same change.
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { forgetKeysOfUser, hasKeyFor } from "../auth/api-keys";
import { forgetSessionsOfUser } from "../auth/browser-sessions";
import { requireScope } from "../auth/middleware";
import { forgetGrantsInAuthorizationServer } from "../auth/oauth";
import { revokeGrants } from "../auth/oauth-grants";
import { findUser, forgetUserState, isOperatorUser, listUsers, setUserDisabled, UserView } from "../auth/users";
import { ApiError } from "../errors";
import { BEARER, errors, json, jsonBody, routes } from "../http";
import { forgetPersonStatement } from "../memory/memory-store";
import { quoted } from "../quote";
import { notifyMemoryChange } from "../session/memory-notify";
import { callerOf } from "../session/session-client";
import { isOperator } from "../tenancy/roles";
import { deletePerson, SESSIONS_A_REQUEST } from "./person-deletion";
import { changeRow } from "./record-change";

const admin = { security: BEARER, middleware: [requireScope("admin")], tags: ["admin"] };

const UserId = z.object({ id: z.string().min(1).max(200) });

const UserChangeBody = z.strictObject({
  disabled: z.boolean({ error: "must be true or false" }),
  /** With `disabled: true`: the person's own memories are forgotten too, in the same change (docs/memory.md). */
  forget: z.boolean({ error: "must be true or false" }).optional(),
});

const PersonDeletedView = z.object({
  userId: z.string(),
  deleted: z.object({
    sessions: z.number().int(),
    memories: z.number().int(),
    schedules: z.number().int(),
    webhooks: z.number().int(),
  }),
  sessionsLeft: z
    .number()
    .int()
    .describe(`Sessions still to delete (${SESSIONS_A_REQUEST} go a request): DELETE again until it is 0.`),
});

export const adminUserRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/users",
      summary: "The users of your organization, most recently seen first",
      ...admin,
      responses: { 200: json(z.object({ users: z.array(UserView) }), "The users."), ...errors(401, 403) },
    }),
    async (c) => c.json({ users: await listUsers(c.get("db"), c.get("principal").org) }, 200),
  )
  .openapi(
    createRoute({
      method: "patch",
      path: "/admin/users/{id}",
      summary:
        "Disables a user of your organization (their keys, browser sessions and OAuth grants end), or enables them",
      ...admin,
      request: { params: UserId, ...jsonBody(UserChangeBody, "What changes.") },
      responses: {
        200: json(
          z.object({
            user: UserView,
            forgotten: z
              .object({ memories: z.number().int() })
              .optional()
              .describe("With `forget`: what of the person's was forgotten."),
          }),
          "Changed.",
        ),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { disabled, forget } = c.req.valid("json");
      const { org, user: self } = c.get("principal");
      // A user is one the org has seen, or one a key of the org acts for (disabled before their first request).
      const known = (await findUser(c.get("db"), org, id)) ?? (await hasKeyFor(c.get("db"), org, id));
      if (!known) throw new ApiError("user_not_found", `User ${quoted(id)} not found in your organization.`);
      if (!isOperator(c.get("principal")) && (await isOperatorUser(c.get("db"), org, id))) {
        throw new ApiError("insufficient_scope", "Only an operator disables or enables an operator.");
      }
      if (forget && !disabled) {
        throw new ApiError(
          "invalid_request",
          "'forget' goes with 'disabled': true (a person is forgotten when disabled).",
          {
            param: "forget",
          },
        );
      }
      if (disabled && id === self) {
        throw new ApiError("invalid_request", "You cannot disable yourself; ask another admin of your organization.", {
          param: "disabled",
        });
      }
      const before = await findUser(c.get("db"), org, id);
      const action = disabled ? "user.disable" : "user.enable";
      const forgetting = forget ? [forgetPersonStatement(c.get("db"), org, id)] : [];
      const written = await setUserDisabled(c.get("db"), org, id, disabled, [
        changeRow(c, { org, action, target: id, before, after: { id, disabled, ...(forget ? { forget } : {}) } }),
        ...forgetting,
      ]);
      // Their sessions drop their copies of the memories forgotten, before the answer goes out.
      if (forget) await notifyMemoryChange(c.env, c.get("db"), org, id, c.get("logger"));
      forgetKeysOfUser(org, id);
      forgetSessionsOfUser(org, id);
      forgetUserState(org, id);
      const revoked = disabled ? await revokeGrants(c.get("db"), org, id) : [];
      if (revoked.length > 0) {
        // Each grant the disabling ended is a row of its own (its record is revoked above, in one statement).
        await c
          .get("db")
          .batch(
            revoked.map((grant) =>
              changeRow(c, { org, action: "grant.revoke", target: grant.id, before: { user: id } }),
            ),
          );
        const kvGrantIds = revoked.map((grant) => grant.kvGrantId);
        c.executionCtx.waitUntil(forgetGrantsInAuthorizationServer(c.env, new URL(c.req.url), org, id, kvGrantIds));
      }
      const user = await findUser(c.get("db"), org, id);
      c.get("logger").addCustomEvent(
        "Message",
        disabled ? "[admin_users_disable]" : "[admin_users_enable]",
        disabled ? "User disabled." : "User enabled.",
        [["target_user", id]],
      );
      const forgotten = forget ? { forgotten: { memories: written.at(-1)?.results.length ?? 0 } } : {};
      return c.json({ user: user as UserView, ...forgotten }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/admin/users/{id}",
      summary: "Deletes a disabled user's data for good: sessions, memories, schedules, webhooks, email and name",
      description:
        "The user must be disabled first (409 user_not_disabled). Their row stays, disabled and without email or " +
        `name: it refuses their keys from then on. Sessions go ${SESSIONS_A_REQUEST} a request; \`sessionsLeft\` says ` +
        "how many remain (DELETE again). docs/memory.md.",
      ...admin,
      request: { params: UserId },
      responses: { 200: json(PersonDeletedView, "Deleted."), ...errors(401, 403, 404, 409) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { org } = c.get("principal");
      const user = await findUser(c.get("db"), org, id);
      if (!user && !(await hasKeyFor(c.get("db"), org, id))) {
        throw new ApiError("user_not_found", `User ${quoted(id)} not found in your organization.`);
      }
      if (!isOperator(c.get("principal")) && (await isOperatorUser(c.get("db"), org, id))) {
        throw new ApiError("insufficient_scope", "Only an operator deletes an operator.");
      }
      if (!user?.disabled) {
        throw new ApiError(
          "user_not_disabled",
          `User ${quoted(id)} is not disabled: disable them first (PATCH /admin/users/{id} {"disabled": true}).`,
        );
      }
      const deleted = await deletePerson(c.env, c.get("db"), callerOf(c), org, id, [
        changeRow(c, { org, action: "user.delete", target: id, before: user }),
      ]);
      const { sessionsLeft, ...counts } = deleted;
      c.get("logger").addCustomEvent("Message", "[admin_users_delete]", "User deleted.", [["target_user", id]]);
      return c.json({ userId: id, deleted: counts, sessionsLeft }, 200);
    },
  );

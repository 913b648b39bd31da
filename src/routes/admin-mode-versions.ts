// /admin/modes/:key/versions (admin scope): the versions of a mode the caller's org sees (docs/modes.md, Versions):
// the list, one version's snapshot, the diff of two, and restoring one (a new version equal in content, audited as
// `mode.restore`; only whoever may change the mode restores it, as for PUT).
import { createRoute } from "@hono/zod-openapi";
import { z } from "zod";
import { requireScope } from "../auth/middleware";
import { ApiError } from "../errors";
import { type AppContext, BEARER, errors, json, parseWith, routes } from "../http";
import { AgentMode } from "../modes/agent-mode";
import { D1AgentModeCatalogService, ownedModeStatement, parseModeRow } from "../modes/catalog-service";
import { diffModes, listVersions, ModeVersionEntry, readVersion } from "../modes/mode-versions";
import { quoted } from "../quote";
import { OwnerQuery, writeOwner } from "../tenancy/ownership";
import { ModeBody, ModeKey, upsertFields, withGuardrails, writeMode } from "./admin-modes";

const versionNumber = z
  .string()
  .regex(/^[1-9][0-9]{0,8}$/, "must be a whole number from 1")
  .transform(Number);
const VersionPath = ModeKey.extend({ version: versionNumber });
const DiffQuery = z.object({
  to: versionNumber.optional().describe("The version to compare with (the current one without it)."),
});

const admin = { tags: ["admin"], security: BEARER, middleware: [requireScope("admin")] };

/** The mode `key` as the caller's org sees it (or the owner `?owner=` names, as stored); 404 when there is none. */
async function modeOf(c: AppContext, key: string, owner: "org" | "deployment" | undefined): Promise<AgentMode> {
  const { org } = c.get("principal");
  const mode =
    owner === undefined
      ? await new D1AgentModeCatalogService(c.get("db"), org).getMode(key)
      : await ownedModeStatement(c.get("db"), owner === "org" ? org : null, key)
          .first<Record<string, unknown>>()
          .then((row) => (row ? parseModeRow(row) : null));
  if (!mode) throw new ApiError("mode_not_found", `Mode ${quoted(key)} not found.`);
  return mode;
}

/** Version `version` of `mode`; 404 `mode_version_not_found` when it never had it. */
async function versionOf(c: AppContext, mode: AgentMode, version: number, param: string): Promise<AgentMode> {
  const found = await readVersion(c.get("db"), mode, version);
  if (found) return found;
  throw new ApiError("mode_version_not_found", `Mode ${quoted(mode.key)} has no version ${version}.`, { param });
}

const ModeDiff = z.object({
  from: z.number().int(),
  to: z.number().int(),
  /** Each field whose value differs (`version` and the timestamps are not compared). */
  changes: z.array(z.object({ field: z.string(), before: z.unknown(), after: z.unknown() })),
});

export const adminModeVersionRoutes = routes()
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/modes/{key}/versions",
      summary: "The versions of a mode, newest first (the current one marked)",
      ...admin,
      request: { params: ModeKey, query: OwnerQuery },
      responses: {
        200: json(z.object({ data: z.array(ModeVersionEntry) }), "The versions."),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const mode = await modeOf(c, c.req.valid("param").key, c.req.valid("query").owner);
      return c.json({ data: await listVersions(c.get("db"), mode) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/modes/{key}/versions/{version}",
      summary: "One version of a mode: the mode as it then was",
      ...admin,
      request: { params: VersionPath, query: OwnerQuery },
      responses: { 200: json(AgentMode, "The version."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { key, version } = c.req.valid("param");
      const mode = await modeOf(c, key, c.req.valid("query").owner);
      return c.json(await versionOf(c, mode, version, "version"), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/admin/modes/{key}/versions/{version}/diff",
      summary: "What changed from one version of a mode to another (to the current one without `to`)",
      ...admin,
      request: { params: VersionPath, query: OwnerQuery.extend(DiffQuery.shape) },
      responses: { 200: json(ModeDiff, "The fields that differ."), ...errors(400, 401, 403, 404) },
    }),
    async (c) => {
      const { key, version } = c.req.valid("param");
      const query = c.req.valid("query");
      const mode = await modeOf(c, key, query.owner);
      const before = await versionOf(c, mode, version, "version");
      const after = await versionOf(c, mode, query.to ?? mode.version, "to");
      return c.json({ from: before.version, to: after.version, changes: diffModes(before, after) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/admin/modes/{key}/versions/{version}/restore",
      summary:
        "Restores an earlier version of a mode: written as a new version equal in content (the default flag stays as it is)",
      ...admin,
      request: { params: VersionPath, query: OwnerQuery },
      responses: {
        200: json(z.object({ mode: AgentMode }), "The mode as now written."),
        ...errors(400, 401, 403, 404),
      },
    }),
    async (c) => {
      const { key, version } = c.req.valid("param");
      const asked = c.req.valid("query").owner;
      const seen = await modeOf(c, key, asked);
      const owner = writeOwner(c.get("principal"), "mode", key, seen, asked);
      const row = await ownedModeStatement(c.get("db"), owner, key).first<Record<string, unknown>>();
      if (!row) throw new ApiError("mode_not_found", `Mode ${quoted(key)} not found.`);
      const existing = parseModeRow(row);
      const restored = await versionOf(c, existing, version, "version");
      // Which mode is the default is not a version's to change: it stays as it is now.
      const fields = { ...upsertFields(restored), isDefault: existing.isDefault };
      const body = withGuardrails(parseWith(ModeBody, fields, `version ${version}`));
      const mode = await writeMode(c, { owner, key, body, existing, action: "mode.restore" });
      return c.json({ mode }, 200);
    },
  );

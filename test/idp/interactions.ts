// The provider's interactions, served at /interaction/:uid: the login page and its form, then consent granted at
// once for whatever the client asked (a test provider has no consent screen).
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Interaction, Provider } from "oidc-provider";
import { findUser, type IdpUser } from "./accounts.ts";
import { readText, sendHtml } from "./http.ts";
import { errorPage, loginPage } from "./pages.ts";

export interface InteractionContext {
  provider: Provider;
  users: IdpUser[];
}

export async function serveInteraction(
  idp: InteractionContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  let interaction: Interaction;
  try {
    interaction = await idp.provider.interactionDetails(request, response);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    sendHtml(response, 400, errorPage("Sign-in not found", `Start again from the application (${reason}).`));
    return;
  }
  switch (interaction.prompt.name) {
    case "consent":
      return grantConsent(idp, interaction, request, response);
    case "login":
      if (request.method === "POST") return submitLogin(idp, interaction, request, response);
      sendHtml(response, 200, loginPageFor(idp, interaction));
      return;
    default:
      sendHtml(response, 501, errorPage("Not supported", `The prompt ${interaction.prompt.name} is not supported.`));
  }
}

function loginPageFor(idp: InteractionContext, interaction: Interaction, refusal?: string): string {
  return loginPage({
    action: `/interaction/${interaction.uid}`,
    clientId: interaction.params.client_id,
    users: idp.users,
    ...(refusal === undefined ? {} : { refusal }),
  });
}

/** The form's `login` names a user (by sub or email): signed in; anyone else is refused on the page. */
async function submitLogin(
  idp: InteractionContext,
  interaction: Interaction,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const login = new URLSearchParams(await readText(request)).get("login") ?? "";
  const user = findUser(idp.users, login);
  if (!user) {
    const known = idp.users.map((u) => u.sub).join(" or ");
    sendHtml(response, 403, loginPageFor(idp, interaction, `There is no user "${login}" here: sign in as ${known}.`));
    return;
  }
  await idp.provider.interactionFinished(
    request,
    response,
    { login: { accountId: user.sub, remember: false } },
    { mergeWithLastSubmission: false },
  );
}

/** Grants the client every scope, claim and resource scope still missing, as the dev interactions' "Continue" does. */
async function grantConsent(
  idp: InteractionContext,
  interaction: Interaction,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const accountId = interaction.session?.accountId;
  if (accountId === undefined) {
    sendHtml(response, 400, errorPage("Sign-in not found", "Consent was asked before anyone signed in."));
    return;
  }
  const existing = interaction.grantId === undefined ? undefined : await idp.provider.Grant.find(interaction.grantId);
  const grant = existing ?? new idp.provider.Grant({ accountId, clientId: interaction.params.client_id });
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = interaction.prompt.details;
  if (missingOIDCScope) grant.addOIDCScope(missingOIDCScope.join(" "));
  if (missingOIDCClaims) grant.addOIDCClaims(missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(" "));
  }
  const grantId = await grant.save();
  await idp.provider.interactionFinished(
    request,
    response,
    { consent: { grantId } },
    { mergeWithLastSubmission: true },
  );
}

// The approval notification settings of the person behind the token: read, changed, and a
// test mail to check them.
import * as v from "valibot";
import { composeMail } from "../../mail/compose.ts";
import { ADDS, OVERWRITES, READ, ToolError } from "../../mcp/tool.ts";
import { StoreUnavailableError } from "../../store/store.ts";
import { NotificationSettingsSchema } from "../domain/records.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { DEFAULT_NOTIFICATION_SETTINGS } from "../domain/workspace.ts";
import { auditCall, commitCall, scopedTool } from "./scoped_tool.ts";

export function notificationTools(services: WorkspaceServices) {
  return [
    _getNotificationSettings(services),
    _updateNotificationSettings(services),
    _sendTestNotification(services),
  ];
}

function _getNotificationSettings(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "get_notification_settings",
    title: "Read my notification settings",
    description: "Your own approval notification settings in this business.",
    scope: "notifications.manage",
    input: v.strictObject({}),
    output: NotificationSettingsSchema,
    annotations: READ,
    async handler(_args, { auth }) {
      return (await workspace.notificationSettings.get(auth.businessId, auth.accountId))?.value ??
        DEFAULT_NOTIFICATION_SETTINGS;
    },
  });
}

function _updateNotificationSettings(services: WorkspaceServices) {
  const { workspace } = services;
  return scopedTool({
    name: "update_notification_settings",
    title: "Change my notification settings",
    description:
      "Changes your own approval notification settings: whether decisions are e-mailed to you, and the chat-workspace account linked to you.",
    scope: "notifications.manage",
    input: v.strictObject({
      approvalEmails: v.optional(v.boolean()),
      chatAccount: v.optional(
        v.nullable(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
      ),
    }),
    output: NotificationSettingsSchema,
    annotations: OVERWRITES,
    handler: (args, { auth }) =>
      commitCall(services, auth, "update_notification_settings", async () => {
        const key = workspace.notificationSettings.key(auth.businessId, auth.accountId);
        const stored = await workspace.notificationSettings.get(auth.businessId, auth.accountId);
        const current = stored?.value ?? DEFAULT_NOTIFICATION_SETTINGS;
        const settings = {
          approvalEmails: args.approvalEmails ?? current.approvalEmails,
          chatAccount: args.chatAccount === undefined ? current.chatAccount : args.chatAccount,
        };
        return {
          checks: [{ key, version: stored?.version ?? null }],
          mutations: [{ type: "set", key, value: settings }],
          summary: `Approval e-mails ${settings.approvalEmails ? "on" : "off"}; chat account ${
            settings.chatAccount ?? "none"
          }`,
          event: null,
          result: settings,
        };
      }),
  });
}

function _sendTestNotification(services: WorkspaceServices) {
  const { accounts, gates, mailer } = services;
  return scopedTool({
    name: "send_test_notification",
    title: "Send myself a test notification",
    description: "E-mails you a test approval notification, to check your settings.",
    scope: "notifications.manage",
    input: v.strictObject({}),
    output: v.object({ sentTo: v.string() }),
    annotations: { ...ADDS, openWorldHint: true },
    async handler(_args, { auth }) {
      const account = await accounts.getAccount(auth.accountId);
      if (!account) throw new ToolError("Your account no longer exists");
      const link = gates.approvalsUrl;
      const business = await accounts.getBusiness(auth.businessId);
      const businessName = business?.name ?? "your business";
      try {
        await mailer.send(composeMail({
          to: account.email,
          subject: `Test notification from ${businessName} on Vestibule`,
          heading: `Your approval notifications for "${businessName}" reach you`,
          paragraphs: [
            `This is a test an agent sent at your request: nothing needs approving. When an ` +
            `agent asks for an owner's approval in "${businessName}", or an owner decides what ` +
            `your agent asked for, you get a mail like this one.`,
            `Every approval of your businesses is also listed on your approvals page.`,
          ],
          action: { label: "Open your approvals", url: link },
          reason: `You get this because an agent you connected to "${businessName}" asked ` +
            `for a test notification (send_test_notification).`,
          origin: new URL(link).origin,
        }));
      } catch (error) {
        // The store's outage is the endpoint's to answer (503), as for every other tool.
        if (error instanceof StoreUnavailableError) throw error;
        throw new ToolError("The test notification could not be sent; try again later");
      }
      await auditCall(
        services,
        auth,
        "send_test_notification",
        `Sent a test notification to ${account.email}`,
      );
      return { sentTo: account.email };
    },
  });
}

// The private agent conversations of the person behind the token, in one business: started,
// listed, added to; nobody else's are ever seen.
import * as v from "valibot";
import { ADDS, READ, ToolError } from "../../mcp/tool.ts";
import { ConversationSchema } from "../domain/records.ts";
import type { WorkspaceServices } from "../domain/services.ts";
import { auditCall, IdInput, scopedTool } from "./scoped_tool.ts";

export function conversationTools(services: WorkspaceServices) {
  return [
    _createConversation(services),
    _listConversations(services),
    _addConversationMessage(services),
  ];
}

function _createConversation(services: WorkspaceServices) {
  const { conversations } = services;
  return scopedTool({
    name: "create_conversation",
    title: "Start a private conversation",
    description: "Creates one of your private agent conversations in this business.",
    scope: "agent.sessions",
    input: v.strictObject({
      title: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(200)),
    }),
    output: ConversationSchema,
    annotations: ADDS,
    async handler(args, { auth }) {
      const conversation = await conversations.create(
        auth.businessId,
        auth.accountId,
        args.title,
      );
      await auditCall(services, auth, "create_conversation", "Started a private conversation");
      return conversation;
    },
  });
}

function _listConversations(services: WorkspaceServices) {
  const { conversations } = services;
  return scopedTool({
    name: "list_conversations",
    title: "List my private conversations",
    description: "Your private agent conversations in this business; nobody else's.",
    scope: "agent.sessions",
    input: v.strictObject({}),
    output: v.object({ conversations: v.array(ConversationSchema) }),
    annotations: READ,
    async handler(_args, { auth }) {
      return { conversations: await conversations.list(auth.businessId, auth.accountId) };
    },
  });
}

function _addConversationMessage(services: WorkspaceServices) {
  const { conversations } = services;
  return scopedTool({
    name: "add_conversation_message",
    title: "Add to a private conversation",
    description: "Appends a message to one of your private conversations.",
    scope: "agent.sessions",
    input: v.strictObject({
      conversationId: IdInput("The conversation."),
      role: v.picklist(["user", "agent"]),
      text: v.pipe(v.string(), v.minLength(1), v.maxLength(8_000)),
    }),
    output: ConversationSchema,
    annotations: ADDS,
    async handler(args, { auth }) {
      const updated = await conversations.append(
        auth.businessId,
        auth.accountId,
        args.conversationId,
        {
          role: args.role,
          text: args.text,
        },
      );
      if (updated === null) {
        throw new ToolError(`No conversation ${args.conversationId} of yours`);
      }
      if (updated === "full") throw new ToolError("The conversation is full; start a new one");
      await auditCall(
        services,
        auth,
        "add_conversation_message",
        "Added to a private conversation",
      );
      return updated;
    },
  });
}

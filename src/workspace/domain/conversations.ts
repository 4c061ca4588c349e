/**
 * Private agent conversations (`agent.sessions`): each belongs to one account in one
 * business and is never listed to anyone else, owners included.
 */
import type { Store } from "../../store/store.ts";
import { RETRY, retryCommit } from "../../store/commit_retry.ts";
import type { Conversation } from "./records.ts";

/** Bounds that keep one conversation record well inside a store value. */
export const MAX_MESSAGES = 200;

export interface Conversations {
  create(businessId: string, accountId: string, title: string): Promise<Conversation>;
  list(businessId: string, accountId: string): Promise<Conversation[]>;
  /** Appends a message; null when the conversation is not this account's, or is full. */
  append(
    businessId: string,
    accountId: string,
    conversationId: string,
    message: { role: "user" | "agent"; text: string },
  ): Promise<Conversation | null | "full">;
}

export function createConversations(store: Store, now: () => number): Conversations {
  const key = (businessId: string, accountId: string, id: string) => [
    "ws",
    businessId,
    "conversation",
    accountId,
    id,
  ];
  return {
    async create(businessId, accountId, title) {
      const conversation: Conversation = {
        id: crypto.randomUUID(),
        title,
        createdAt: now(),
        messages: [],
      };
      await store.set(key(businessId, accountId, conversation.id), conversation);
      return conversation;
    },
    async list(businessId, accountId) {
      const conversations: Conversation[] = [];
      const prefix = ["ws", businessId, "conversation", accountId];
      for await (const entry of store.list<Conversation>(prefix)) conversations.push(entry.value);
      return conversations;
    },
    async append(businessId, accountId, conversationId, message) {
      return await retryCommit(async () => {
        const entry = await store.get<Conversation>(key(businessId, accountId, conversationId));
        if (!entry) return null;
        if (entry.value.messages.length >= MAX_MESSAGES) return "full";
        const updated: Conversation = {
          ...entry.value,
          messages: [...entry.value.messages, { ...message, at: now() }],
        };
        const ok = await store.commit([{ key: entry.key, version: entry.version }], [
          { type: "set", key: entry.key, value: updated },
        ]);
        return ok ? updated : RETRY;
      });
    },
  };
}

// Who reads an approval: the person whose agent asked for it, and the business's owners; no
// other member, on the pages or through get_approval and redeliver_decision.
import assert from "node:assert/strict";
import { type Browser, hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { signIn, startWorkspaceServer } from "../support/workspace_support.ts";

Deno.test("a member reads only their own agents' approvals; owners read every one", async (t) => {
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env });
  const { authUrl } = ws.server;
  await ws.workspace.workflows.put(ws.businessId, {
    id: "wf-1",
    name: "Refund triage",
    description: "",
    kind: "paid",
    costPerRunCents: 40,
    status: "active",
    updatedAt: 0,
  });
  const second = await ws.accounts.addMember(ws.businessId, "second@example.com", "member");
  const { token: ownerToken } = await ws.token(["app.access", "workflows.run"]);
  const memberScopes = ["app.access", "skills.draft", "gates.redeliver"];
  const { token: memberToken } = await ws.token(memberScopes, { accountId: ws.memberId });
  const { token: secondToken } = await ws.token(memberScopes, { accountId: second.accountId });
  const ask = async (token: string, tool: string, args: Record<string, unknown>) => {
    const { message } = await ws.call(token, tool, args);
    return message.result.structuredContent as { gateId: string; approvalUrl: string };
  };
  /** What a gate tool answers `token` about `gateId`: the view, or the tool error's words. */
  const read = async (token: string, tool: string, gateId: string) => {
    const { message } = await ws.call(token, tool, { gateId });
    return message.result.isError
      ? message.result.content[0].text
      : message.result.structuredContent;
  };
  const listed = async (browser: Browser, gateId: string) =>
    (await browser.get(`${authUrl}/approvals`)).text.includes(`/approvals/${gateId}"`);
  let owner: Browser | undefined;
  let member: Browser | undefined;
  let other: Browser | undefined;
  try {
    owner = await signIn(ws, outbox, "owner@example.com");
    member = await signIn(ws, outbox, "member@example.com");
    other = await signIn(ws, outbox, "second@example.com");

    await t.step("an owner's request is not there for a member", async () => {
      const pending = await ask(ownerToken, "start_workflow", { workflowId: "wf-1" });
      assert.equal((await member!.get(pending.approvalUrl)).status, 404);
      assert.equal(await listed(member!, pending.gateId), false);
      assert.equal(await listed(owner!, pending.gateId), true);
      const page = await owner!.get(pending.approvalUrl);
      const decided = await owner!.post(pending.approvalUrl, {
        csrf: hiddenField(page.text, "csrf"),
        decision: "approve",
      });
      assert.equal(decided.status, 303);
      const refusal = `No approval ${pending.gateId} in this business`;
      assert.equal(await read(memberToken, "get_approval", pending.gateId), refusal);
      assert.equal(await read(memberToken, "redeliver_decision", pending.gateId), refusal);
      assert.equal((await read(ownerToken, "get_approval", pending.gateId)).status, "approved");
    });

    await t.step("a member's request is theirs and the owners', no other member's", async () => {
      const pending = await ask(memberToken, "draft_skill", {
        name: "Refund notes",
        description: "Writes refund notes",
        instructions: "Summarise each refund in one line.",
      });
      assert.equal((await member!.get(pending.approvalUrl)).status, 200);
      assert.equal(await listed(member!, pending.gateId), true);
      assert.equal((await read(memberToken, "get_approval", pending.gateId)).status, "pending");
      assert.equal((await owner!.get(pending.approvalUrl)).status, 200);
      assert.equal(await listed(owner!, pending.gateId), true);
      assert.equal((await other!.get(pending.approvalUrl)).status, 404);
      assert.equal(await listed(other!, pending.gateId), false);
      assert.equal(
        await read(secondToken, "get_approval", pending.gateId),
        `No approval ${pending.gateId} in this business`,
      );
    });
  } finally {
    await ws.close();
  }
});

import assert from "node:assert/strict";
import { Browser, hiddenField, tempOutbox } from "../support/accounts_browser.ts";
import { escapeHtml } from "../../../src/ui/html.ts";
import { signIn, startWorkspaceServer } from "../support/workspace_support.ts";

Deno.test("workspace gates: nothing changes until an owner approves, once", async (t) => {
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env });
  const { authUrl } = ws.server;
  const b = ws.businessId;
  await ws.workspace.workflows.put(b, {
    id: "wf-1",
    name: "Refund triage",
    description: "",
    kind: "paid",
    costPerRunCents: 40,
    status: "active",
    updatedAt: 0,
  });
  const { token } = await ws.token([
    "app.access",
    "workflows.run",
    "members.request",
    "gates.redeliver",
  ]);
  const requestRun = async () => {
    const { status, message } = await ws.call(token, "start_workflow", { workflowId: "wf-1" });
    assert.equal(status, 200);
    return message.result.structuredContent;
  };
  const approval = async (gateId: string) =>
    (await ws.call(token, "get_approval", { gateId })).message.result.structuredContent;
  const owner = await signIn(ws, outbox, "owner@example.com");
  const member = await signIn(ws, outbox, "member@example.com");
  try {
    await t.step("a gated call records a pending approval and changes nothing", async () => {
      const pending = await requestRun();
      assert.deepEqual(Object.keys(pending).sort(), ["approvalUrl", "gateId", "status", "summary"]);
      assert.equal(pending.status, "pending");
      assert.equal(pending.approvalUrl, `${authUrl}/approvals/${pending.gateId}`);
      assert.equal(
        pending.summary,
        'Start one run of the paid workflow "Refund triage", billed $0.40',
      );
      assert.deepEqual(await ws.workspace.runs.list(b), []);
      assert.equal((await approval(pending.gateId)).status, "pending");
    });

    await t.step("the approval page needs a session", async () => {
      const pending = await requestRun();
      const anonymous = await new Browser().get(pending.approvalUrl);
      assert.equal(anonymous.status, 303);
      assert.equal(
        anonymous.response.headers.get("Location"),
        `${authUrl}/sign-in?return_to=${encodeURIComponent(`/approvals/${pending.gateId}`)}`,
      );
    });

    await t.step("a member reads their own agent's request but cannot approve it", async () => {
      const { token: memberToken } = await ws.token(["app.access", "skills.draft"], {
        accountId: ws.memberId,
      });
      const asked = await ws.call(memberToken, "draft_skill", {
        name: "Refund notes",
        description: "Writes refund notes",
        instructions: "Summarise each refund in one line.",
      });
      const pending = asked.message.result.structuredContent;
      const page = await member.get(pending.approvalUrl);
      assert.equal(page.status, 200);
      assert.ok(page.text.includes("Only an owner of Acme Outdoor can decide this."));
      assert.ok(!page.text.includes('value="approve"'));
      const ownerPage = await owner.get(pending.approvalUrl);
      const forged = await member.post(pending.approvalUrl, {
        csrf: hiddenField(ownerPage.text, "csrf"),
        decision: "approve",
      });
      assert.equal(forged.status, 403);
      assert.deepEqual(await ws.workspace.skills.list(b), []);
      assert.equal((await approval(pending.gateId)).status, "pending");
    });

    await t.step("a decision without the CSRF token is refused", async () => {
      const pending = await requestRun();
      const refused = await owner.post(pending.approvalUrl, { decision: "approve" });
      assert.equal(refused.status, 403);
      assert.equal((await approval(pending.gateId)).status, "pending");
    });

    await t.step("an owner approves; approving twice changes once", async () => {
      const pending = await requestRun();
      const page = await owner.get(pending.approvalUrl);
      assert.equal(page.status, 200);
      assert.ok(page.text.includes(pending.summary.replaceAll('"', "&quot;")));
      assert.ok(page.text.includes('name="decision" value="approve"'));
      assert.match(
        page.text,
        /through test-client <details class="id"><summary>client id<\/summary><code>test-client<\/code>/,
      );
      assert.ok(page.text.includes('name="decision" value="decline"'));
      const csrf = hiddenField(page.text, "csrf");
      const [first, second] = await Promise.all([
        owner.post(pending.approvalUrl, { csrf, decision: "approve" }),
        owner.post(pending.approvalUrl, { csrf, decision: "approve" }),
      ]);
      assert.deepEqual([first.status, second.status].sort(), [303, 409]);
      // The decider lands on a confirmation of what happened; the same address read by anyone
      // else (or before the decision) confirms nothing.
      const location = [first, second].find((r) => r.status === 303)!.response.headers.get(
        "Location",
      )!;
      assert.equal(location, `/approvals/${pending.gateId}?decided`);
      const confirmed = await owner.get(`${authUrl}${location}`);
      assert.match(
        confirmed.text,
        /id="decision-confirmation">\s*<p>You approved it\.\s+Done: Start one run of the paid workflow/,
      );
      assert.match(confirmed.text, /The agent learns it the next time it asks/);
      const again = await owner.post(pending.approvalUrl, { csrf, decision: "approve" });
      assert.equal(again.status, 409);
      const runs = await ws.workspace.runs.list(b);
      assert.equal(runs.length, 1);
      assert.equal(runs[0]?.gateId, pending.gateId);
      const after = await approval(pending.gateId);
      assert.equal(after.status, "approved");
      assert.equal(after.applied, true);
      assert.equal(after.delivery.attempts, 1);
    });

    await t.step("declining changes nothing", async () => {
      const before = (await ws.workspace.runs.list(b)).length;
      const pending = await requestRun();
      const page = await owner.get(pending.approvalUrl);
      const declined = await owner.post(pending.approvalUrl, {
        csrf: hiddenField(page.text, "csrf"),
        decision: "decline",
      });
      assert.equal(declined.status, 303);
      const confirmed = await owner.get(`${authUrl}${declined.response.headers.get("Location")}`);
      assert.match(
        confirmed.text,
        /id="decision-confirmation">\s*<p>You declined it\. Nothing was done/,
      );
      assert.equal((await ws.workspace.runs.list(b)).length, before);
      assert.equal((await approval(pending.gateId)).status, "declined");
    });

    await t.step("redeliver_decision resends a decision; a pending one has none", async () => {
      const pending = await requestRun();
      const early = await ws.call(token, "redeliver_decision", { gateId: pending.gateId });
      assert.equal(early.message.result.isError, true);
      const page = await owner.get(pending.approvalUrl);
      await owner.post(pending.approvalUrl, {
        csrf: hiddenField(page.text, "csrf"),
        decision: "decline",
      });
      const mails = (await outbox.read()).length;
      const redelivered = await ws.call(token, "redeliver_decision", { gateId: pending.gateId });
      assert.equal(redelivered.message.result.structuredContent.delivery.attempts, 2);
      assert.equal((await outbox.read()).length, mails + 1);
    });

    await t.step("an access change happens only on approval", async () => {
      const { message } = await ws.call(token, "request_access_change", {
        change: "invite",
        email: "New.Hire@Example.com",
      });
      const pending = message.result.structuredContent;
      assert.equal(pending.summary, "Invite new.hire@example.com as a member");
      assert.equal((await ws.accounts.listMembers(b)).length, 2);
      const page = await owner.get(pending.approvalUrl);
      await owner.post(pending.approvalUrl, {
        csrf: hiddenField(page.text, "csrf"),
        decision: "approve",
      });
      const emails = (await ws.accounts.listMembers(b)).map((m) => m.account.email);
      assert.ok(emails.includes("new.hire@example.com"));
    });

    await t.step("the approvals list shows the business's gates", async () => {
      const list = await owner.get(`${authUrl}/approvals`);
      assert.equal(list.status, 200);
      assert.ok(list.text.includes("Refund triage"));
    });

    await t.step(
      "/account shows the connection test and the audit log, a member's own",
      async () => {
        const setup = await ws.call(token, "get_agent_connection_setup");
        const { attemptId } = setup.message.result.structuredContent;
        await ws.call(token, "verify_agent_connection", { attemptId });
        const page = await owner.get(`${authUrl}/account`);
        assert.equal(page.status, 200);
        assert.match(
          page.text,
          /<strong>test-client<\/strong><br>\s*<span class="muted"><span data-connection-status="verified">/,
        );
        const auditLink = `/account/audit?business=${b}`;
        assert.ok(page.text.includes(`href="${auditLink}">Audit log</a>`));
        const audit = await owner.get(`${authUrl}${auditLink}`);
        assert.match(audit.text, /data-label="What">Owner approved: Start one run/);
        const memberPage = await member.get(`${authUrl}/account`);
        assert.ok(memberPage.text.includes('data-connection-status="verified"'));
        // A member reads their own account's entries only: not the owner's run.
        assert.ok(memberPage.text.includes(`href="${auditLink}">Your audit log</a>`));
        const memberAudit = await member.get(`${authUrl}${auditLink}`);
        assert.equal(memberAudit.status, 200);
        assert.doesNotMatch(memberAudit.text, /Start one run/);
      },
    );

    await t.step("/account lists the approvals waiting for an owner, with links", async () => {
      const pending = await requestRun();
      const link = `<a href="/approvals/${pending.gateId}">${escapeHtml(pending.summary)}</a>`;
      const page = await owner.get(`${authUrl}/account`);
      assert.ok(page.text.includes("Waiting for your approval"));
      const item =
        `${link}<br> <span class="muted">asked by owner@example.com through test-client, <time`;
      assert.ok(
        page.text.replace(/\s+/g, " ").includes(item),
        "what, who and which agent in one item",
      );
      const form = await owner.get(pending.approvalUrl);
      await owner.post(pending.approvalUrl, {
        csrf: hiddenField(form.text, "csrf"),
        decision: "decline",
      });
      assert.ok(!(await owner.get(`${authUrl}/account`)).text.includes(link), "decided");
      assert.ok(
        !(await member.get(`${authUrl}/account`)).text.includes("Waiting for your approval"),
      );
    });

    await t.step("an unknown or malformed approval id is 404", async () => {
      for (const id of ["no-such-gate", "%E0%A4%A", "%00"]) {
        const page = await owner.get(`${authUrl}/approvals/${id}`);
        assert.equal(page.status, 404, id);
      }
    });

    await t.step("someone outside the business sees nothing", async () => {
      await ws.accounts.createAccountWithBusiness("stranger@example.com", "Elsewhere");
      const stranger = await signIn(ws, outbox, "stranger@example.com");
      const pending = await requestRun();
      assert.equal((await stranger.get(pending.approvalUrl)).status, 404);
    });
  } finally {
    await ws.close();
  }
});

Deno.test("a new gate mails each owner once: the link, what it would do, which agent asked", async () => {
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env });
  try {
    await ws.accounts.addMember(ws.businessId, "co-owner@example.com", "owner");
    const { token } = await ws.token(["app.access", "skills.draft"], {
      accountId: ws.memberId,
      clientId: "skill-writer",
    });
    const { status, message } = await ws.call(token, "draft_skill", {
      name: "Refund notes",
      description: "Writes refund notes",
      instructions: "Summarise each refund in one line.",
    });
    assert.equal(status, 200, JSON.stringify(message));
    const pending = message.result.structuredContent;
    const mails = (await outbox.read()).filter((m) => m.link === pending.approvalUrl);
    assert.deepEqual(mails.map((m) => m.to).sort(), ["co-owner@example.com", "owner@example.com"]);
    for (const mail of mails) {
      // What approving would do, in the approval's own words, not the tool's id (draft_skill).
      assert.equal(
        mail.subject,
        'Approval needed in Acme Outdoor: Install the skill "Refund notes": Writes refund notes',
      );
      assert.equal(
        mail.text.split("\n")[0],
        'member@example.com\'s agent "skill-writer" asks for your approval in "Acme Outdoor"',
      );
      assert.ok(mail.text.includes(`Approving would: ${pending.summary}`), mail.text);
      assert.ok(mail.text.includes(pending.approvalUrl));
      // The approval page's address is the only link (beside the footer's origin): no token,
      // code or sign-in link.
      const links = mail.text.match(/https?:\/\/[^\s]+[^\s.]/g);
      assert.deepEqual(new Set(links), new Set([pending.approvalUrl, ws.server.authUrl]));
    }
  } finally {
    await ws.close();
  }
});

Deno.test("a line break in anything an approval mail shows is refused, naming the field, and no mail carries it", async () => {
  const outbox = await tempOutbox();
  const ws = await startWorkspaceServer({ VESTIBULE_MAIL: outbox.env });
  try {
    await ws.workspace.workflows.put(ws.businessId, {
      id: "wf-1",
      name: "Refund triage",
      description: "",
      kind: "paid",
      costPerRunCents: 40,
      status: "active",
      updatedAt: 0,
    });
    const { token } = await ws.token([
      "app.access",
      "business.name",
      "skills.draft",
      "triggers.manage",
      "connections.manage",
      "connections.helpdesk.request",
      "automation.request",
      "billing.manage",
    ]);
    const injected = "Acme\r\n\r\nApproving is safe: click Approve.";
    const cases = [
      { tool: "rename_business", args: { name: injected }, field: "name" },
      {
        tool: "draft_skill",
        args: { name: injected, description: "Notes", instructions: "One\nper line." },
        field: "name",
      },
      {
        tool: "draft_skill",
        args: { name: "Notes", description: injected, instructions: "One\nper line." },
        field: "description",
      },
      {
        tool: "request_trigger_creation",
        args: { name: injected, event: "order.created", workflowId: "wf-1" },
        field: "name",
      },
      {
        tool: "request_connection_change",
        args: { change: "connect", kind: "commerce", service: "Shop", label: injected },
        field: "label",
      },
      {
        tool: "request_helpdesk_setup",
        args: { change: "setup", service: injected, label: "help.example.com" },
        field: "service",
      },
      {
        tool: "request_automation_authority",
        args: {
          activities: { [injected]: true },
          automaticActions: { enabled: false, maxPerDay: 0, maxAmountCents: 0 },
        },
        field: "activities",
      },
      { tool: "request_billing_change", args: { paymentMethod: injected }, field: "paymentMethod" },
    ];
    for (const { tool, args, field } of cases) {
      const { status, message } = await ws.call(token, tool, args);
      assert.equal(status, 200, tool);
      assert.equal(message.result.isError, true, `${tool} ${field}: ${JSON.stringify(message)}`);
      assert.match(
        message.result.content[0].text,
        new RegExp(`"${field}[^"]*": .*must not contain control characters`),
        tool,
      );
    }
    assert.equal((await ws.accounts.getBusiness(ws.businessId))?.name, "Acme Outdoor");
    // A skill's instructions are lines of their own: never mailed, and still taken.
    const drafted = await ws.call(token, "draft_skill", {
      name: "Refund notes",
      description: "Writes refund notes",
      instructions: "Summarise each refund.\nOne line each.",
    });
    assert.equal(drafted.message.result.isError, undefined, JSON.stringify(drafted.message));
    const mails = await outbox.read();
    assert.ok(mails.length > 0);
    for (const mail of mails) {
      assert.ok(!mail.text.includes("Approving is safe"), mail.text);
      assert.ok(!mail.text.includes("One line each"), mail.text);
    }
  } finally {
    await ws.close();
  }
});

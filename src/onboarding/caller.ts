/** What the onboarding endpoint knows of its anonymous caller (the tools' `auth`). */
export interface OnboardingCaller {
  /** Budgets the mail the account tools send, as the forms are budgeted. */
  readonly clientAddress: string;
}

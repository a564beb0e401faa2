/** The vendor_type of a landed record standing in for a record withheld whole (quarantined). */
export const QUARANTINE_TYPE = "lake/quarantined";

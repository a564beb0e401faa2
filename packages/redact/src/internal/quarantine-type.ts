/**
 * The `vendor_type` of the canonical record that stands in for a record withheld whole
 * (quarantined): ids and usage kept, `attrs` = the QuarantineRecord JSON, no text.
 * The collector lands it; readers show it as withheld.
 */
export const QUARANTINE_TYPE = "lake/quarantined";

// The till's words in French and English. The language is the browser's (navigator.language)
// until the cashier picks one with the switch; the choice is kept in localStorage.

export type Lang = "fr" | "en";

const WORDS = {
  title: { fr: "Caisse", en: "Till" },
  pairTitle: { fr: "Appairer cette caisse", en: "Pair this till" },
  pairHelp: {
    fr: "Ouvrez l'adresse d'appairage donnée par le back-office (…/till#pair=…), ou collez ici le jeton de l'appareil.",
    en: "Open the pairing address the back office gave you (…/till#pair=…), or paste the device token here.",
  },
  deviceToken: { fr: "Jeton de l'appareil", en: "Device token" },
  store: { fr: "Magasin", en: "Store" },
  register: { fr: "Caisse n°", en: "Register" },
  pair: { fr: "Appairer", en: "Pair" },
  unpair: { fr: "Oublier l'appairage", en: "Forget pairing" },
  signInTitle: { fr: "Ouvrir la caisse", en: "Open the till" },
  cashier: { fr: "Identifiant du caissier", en: "Cashier id" },
  pin: { fr: "Code PIN", en: "PIN" },
  openingFloat: { fr: "Fond de caisse (€)", en: "Opening float (€)" },
  signIn: { fr: "Ouvrir la session", en: "Open the session" },
  wrongPin: { fr: "Identifiant ou code PIN incorrect.", en: "Unknown cashier or wrong PIN." },
  deviceRefused: {
    fr: "Le jeton de cet appareil est refusé (expiré ?) : appairez la caisse à nouveau.",
    en: "This device's token is refused (expired?): pair the till again.",
  },
  alreadyOpen: {
    fr: "Cette caisse a déjà une session ouverte sur un autre appareil. Clôturez-la (sans comptage) pour ouvrir la vôtre.",
    en: "This register already has a session open on another device. Close it (uncounted) to open yours.",
  },
  sessionEnded: {
    fr: "La session de caisse a pris fin : ouvrez-en une nouvelle pour envoyer les ventes en attente.",
    en: "The register session has ended: open a new one to send the sales waiting.",
  },
  closeOther: { fr: "Clôturer l'autre session", en: "Close the other session" },
  offlineNoSession: {
    fr: "Serveur injoignable : une session ne s'ouvre qu'en ligne.",
    en: "The server cannot be reached: a session opens online only.",
  },
  unreachable: {
    fr: "Serveur injoignable : réessayez une fois le réseau revenu.",
    en: "The server cannot be reached: try again once the network is back.",
  },
  scan: { fr: "Code-barres ou recherche", en: "Barcode or search" },
  scanHint: { fr: "Scannez, ou tapez un nom puis Entrée", en: "Scan, or type a name and press Enter" },
  unknownBarcode: { fr: "Code-barres inconnu", en: "Unknown barcode" },
  noMatch: { fr: "Aucun article", en: "No article found" },
  emptyCart: { fr: "Panier vide : scannez un article.", en: "Empty cart: scan an article." },
  article: { fr: "Article", en: "Article" },
  qty: { fr: "Qté", en: "Qty" },
  amount: { fr: "Montant", en: "Amount" },
  remove: { fr: "Retirer", en: "Remove" },
  subtotal: { fr: "Sous-total", en: "Subtotal" },
  discounts: { fr: "Remises", en: "Discounts" },
  total: { fr: "Total TTC", en: "Total" },
  vat: { fr: "dont TVA", en: "incl. VAT" },
  vatRate: { fr: "TVA", en: "VAT" },
  items: { fr: "articles", en: "items" },
  payCash: { fr: "Encaisser", en: "Pay" },
  payTitle: { fr: "Paiement", en: "Payment" },
  partCash: { fr: "Reste à payer", en: "Left to pay" },
  addCash: { fr: "Prendre en espèces", en: "Take in cash" },
  cancelPayment: {
    fr: "Annuler le paiement (rendre les espèces, annuler la carte au terminal)",
    en: "Cancel the payment (give the cash back, void the card at the terminal)",
  },
  method_card: { fr: "Carte", en: "Card" },
  cardOffline: {
    fr: "Hors ligne : la carte ne peut pas être débitée sans le serveur. Les espèces restent possibles.",
    en: "Offline: a card cannot be charged without the server. Cash is still available.",
  },
  cardAmount: { fr: "Montant à débiter (€)", en: "Amount to charge (€)" },
  cardAmountBad: { fr: "Un montant entre 0,01 € et le reste dû", en: "An amount from €0.01 to what is due" },
  cardSend: { fr: "Envoyer au terminal", en: "Send to the terminal" },
  cardTitle: { fr: "Paiement par carte", en: "Card payment" },
  cardAsk: { fr: "Au terminal", en: "On the terminal" },
  cardKeyHelp: {
    fr: "Faites payer ce montant sur le terminal, puis saisissez sa réponse.",
    en: "Charge this amount on the terminal, then key in its answer.",
  },
  cardCode: { fr: "N° d'autorisation du terminal", en: "Terminal's authorization code" },
  cardAuthorized: { fr: "Montant accepté (€)", en: "Amount approved (€)" },
  cardLast4: { fr: "4 derniers chiffres (facultatif)", en: "Last 4 digits (optional)" },
  cardApproved: { fr: "Carte acceptée", en: "Card approved" },
  cardDeclinedButton: { fr: "Carte refusée", en: "Card declined" },
  cardDeclined: {
    fr: "Carte refusée : la vente reste ouverte, prenez un autre moyen de paiement.",
    en: "Card declined: the sale stays open, take another tender.",
  },
  cardCancelledButton: { fr: "Annulé au terminal", en: "Cancelled at the terminal" },
  cardUnknownButton: { fr: "Réponse perdue", en: "Answer lost" },
  cardCancelled: {
    fr: "Paiement annulé au terminal : rien n'a été débité, prenez un autre moyen de paiement.",
    en: "Payment cancelled at the terminal: nothing was charged, take another tender.",
  },
  cardUnknown: {
    fr: "Réponse du terminal perdue : la demande reste ouverte. Vérifiez le journal du terminal, puis saisissez sa réponse.",
    en: "The terminal's answer was lost: the attempt stays open. Check the terminal's journal, then key its answer.",
  },
  cardOpen: { fr: "Réponse en attente", en: "Answer awaited" },
  cardOpenHelp: {
    fr: "La carte a peut-être été débitée : aucun autre paiement n'est pris avant la vraie réponse du terminal (acceptée, refusée ou annulée).",
    en: "The card may have been charged: no other tender is taken before the terminal's real answer (approved, declined or cancelled).",
  },
  cardSettle: { fr: "Saisir la réponse du terminal", en: "Key the terminal's answer" },
  cardWasUnknown: {
    fr: "Réponse perdue plus tôt : saisissez ce que dit le journal du terminal.",
    en: "Its answer was lost earlier: key what the terminal's journal says.",
  },
  cardLater: { fr: "Plus tard", en: "Later" },
  leftOpenButton: { fr: "Cartes à régler", en: "Cards to settle" },
  leftOpenTitle: { fr: "Paiements par carte sans vente", en: "Card payments without a sale" },
  leftOpenHelp: {
    fr: "Ces paiements par carte ont été demandés pour une vente qui n'a pas été enregistrée (page rechargée). Vérifiez chacun dans le journal du terminal.",
    en: "These card payments were asked for a sale that was not recorded (the page was reloaded). Check each in the terminal's journal.",
  },
  leftOpenUnknown: { fr: "Réponse du terminal inconnue", en: "The terminal's answer is not known" },
  leftOpenApproved: { fr: "Accepté, aucune vente ne l'a pris", en: "Approved, taken by no sale" },
  leftOpenNotCharged: { fr: "Non débité (refusé ou annulé)", en: "Not charged (declined or cancelled)" },
  leftOpenGiveBack: { fr: "Rendu au client sur le terminal", en: "Given back on the terminal" },
  leftOpenDeclined: { fr: "Enregistré : non débité.", en: "Recorded: not charged." },
  leftOpenVoided: { fr: "Enregistré : rendu au client.", en: "Recorded: given back to the customer." },
  cardOpenFirst: {
    fr: "Saisissez d'abord la réponse du terminal pour la carte en attente.",
    en: "Key the terminal's answer for the card awaited first.",
  },
  cardPartial: { fr: "Carte acceptée :", en: "Card approved:" },
  cardQueued: { fr: "réponse du terminal en attente d'envoi", en: "terminal's answer waiting to be sent" },
  newSale: { fr: "Nouvelle vente", en: "New sale" },
  cancelSale: { fr: "Annuler la vente", en: "Cancel sale" },
  cashTitle: { fr: "Paiement en espèces", en: "Cash payment" },
  due: { fr: "À payer", en: "Due" },
  given: { fr: "Montant remis (€)", en: "Cash given (€)" },
  change: { fr: "Monnaie à rendre", en: "Change due" },
  notEnough: { fr: "Montant insuffisant", en: "Not enough" },
  confirm: { fr: "Valider", en: "Confirm" },
  back: { fr: "Retour", en: "Back" },
  saleDone: { fr: "Vente enregistrée", en: "Sale recorded" },
  saleQueued: { fr: "Vente en attente d'envoi", en: "Sale waiting to be sent" },
  printReceipt: { fr: "Imprimer le ticket", en: "Print receipt" },
  reprintLast: { fr: "Réimprimer le dernier ticket", en: "Reprint the last receipt" },
  reprintDone: { fr: "Réimprimer (duplicata)", en: "Reprint (duplicate)" },
  reprintTitle: { fr: "Réimpression du ticket", en: "Reprint of the receipt" },
  reprintHelp: {
    fr: "Un ticket déjà imprimé ressort en DUPLICATA, numéroté et scellé par le serveur dans le journal de la caisse.",
    en: "A receipt printed before comes out as a DUPLICATA, numbered and sealed by the server in the register's journal.",
  },
  reprintConfirm: { fr: "Imprimer le duplicata", en: "Print the duplicate" },
  reprintOffline: {
    fr: "Hors ligne : impossible de réimprimer maintenant. Un duplicata est numéroté et scellé par le serveur ; réessayez une fois en ligne.",
    en: "Offline: the receipt cannot be reprinted now. A duplicate is numbered and sealed by the server; try again once online.",
  },
  reprintNotBooked: {
    fr: "Cette vente attend encore d'être envoyée : elle se réimprime une fois enregistrée par le serveur.",
    en: "This sale is still waiting to be sent: it can be reprinted once the server has booked it.",
  },
  duplicatePrinted: { fr: "DUPLICATA imprimé, n°", en: "DUPLICATA printed, no." },
  originalPrinted: { fr: "Ticket imprimé (l'original)", en: "Receipt printed (the original)" },
  provisional: {
    fr: "Justificatif provisoire : le ticket sera émis à l'envoi de la vente.",
    en: "Provisional slip: the ticket is issued once the sale is sent.",
  },
  waiting: { fr: "en attente d'envoi", en: "waiting to send" },
  setAside: { fr: "mises de côté", en: "set aside" },
  setAsideTitle: { fr: "Ventes refusées par le serveur", en: "Sales the server set aside" },
  setAsideHelp: {
    fr: "Ces ventes n'ont pas été enregistrées. Montrez-les à un responsable.",
    en: "These sales were not booked. Show them to a manager.",
  },
  retry: { fr: "Renvoyer", en: "Send again" },
  dismiss: { fr: "Écarter", en: "Dismiss" },
  online: { fr: "En ligne", en: "Online" },
  offline: { fr: "Hors ligne", en: "Offline" },
  xReport: { fr: "Rapport X", en: "X report" },
  closeTill: { fr: "Clôturer", en: "Close" },
  closeTitle: { fr: "Clôture de la caisse", en: "Close the till" },
  counted: { fr: "Espèces comptées (€)", en: "Counted cash (€)" },
  closeConfirm: { fr: "Clôturer et éditer le Z", en: "Close and print the Z" },
  closeWaiting: {
    fr: "Des ventes attendent encore d'être envoyées : clôturez une fois la file vide.",
    en: "Sales are still waiting to be sent: close once the queue is empty.",
  },
  zReport: { fr: "Rapport Z", en: "Z report" },
  salesCount: { fr: "Ventes", en: "Sales" },
  totalSales: { fr: "Total des ventes", en: "Sales total" },
  expectedCash: { fr: "Espèces attendues", en: "Expected cash" },
  countedCash: { fr: "Espèces comptées", en: "Counted cash" },
  difference: { fr: "Écart", en: "Difference" },
  tenders: { fr: "Moyens de paiement", en: "Tenders" },
  lateSales: { fr: "Ventes tardives", en: "Late sales" },
  print: { fr: "Imprimer", en: "Print" },
  signOut: { fr: "Nouvelle session", en: "New session" },
  snapshotMissing: {
    fr: "Pas encore de catalogue sur cet appareil : connectez-le au serveur.",
    en: "No catalog on this device yet: connect it to the server.",
  },
  syncing: { fr: "Synchronisation du catalogue…", en: "Syncing the catalog…" },
  catalogAt: { fr: "Catalogue du", en: "Catalog of" },
  refused: { fr: "Refusé", en: "Refused" },
  error: { fr: "Erreur", en: "Error" },
  session: { fr: "Session", en: "Session" },
  method_cash: { fr: "Espèces", en: "Cash" },
  mailAddress: {
    fr: "Ticket par e-mail (vide : à l'adresse du client, s'il l'a accepté)",
    en: "Receipt by e-mail (empty: to the customer's address, if they agreed)",
  },
  mailSend: { fr: "Envoyer le ticket", en: "Send the receipt" },
  mailQueued: { fr: "Ticket envoyé à", en: "Receipt sent to" },
  mailToCustomer: { fr: "l'adresse du client", en: "the customer's address" },
  mailRefused: { fr: "Envoi refusé", en: "Send refused" },
  mailLater: {
    fr: "Le ticket pourra partir par e-mail une fois la vente envoyée.",
    en: "The receipt can be e-mailed once the sale is sent.",
  },
  discountTitle: { fr: "Remise", en: "Discount" },
  discount_line_percent: { fr: "% sur une ligne", en: "% off a line" },
  discount_ticket_percent: { fr: "% sur le ticket", en: "% off the ticket" },
  discount_ticket_amount: { fr: "€ sur le ticket", en: "€ off the ticket" },
  discountLine: { fr: "Ligne", en: "Line" },
  discountPercent: { fr: "Pourcentage (%)", en: "Percent (%)" },
  discountAmount: { fr: "Montant (€)", en: "Amount (€)" },
  discountReason: { fr: "Motif", en: "Reason" },
  reason_manual_markdown: { fr: "Démarque", en: "Markdown" },
  reason_damaged_goods: { fr: "Article abîmé", en: "Damaged goods" },
  reason_manager_goodwill: { fr: "Geste commercial", en: "Goodwill" },
  reason_promotional: { fr: "Promotion", en: "Promotional" },
  reason_loyalty_reward: { fr: "Fidélité", en: "Loyalty reward" },
  approveTitle: { fr: "Accord du responsable", en: "Manager's approval" },
  approveHelp: {
    fr: "Cette remise dépasse ce que le caissier peut accorder : un responsable saisit son code.",
    en: "This discount is more than the cashier may grant: a manager types their PIN.",
  },
  managerId: { fr: "Identifiant du responsable", en: "Manager id" },
  managerPin: { fr: "Code PIN du responsable", en: "Manager's PIN" },
  approve: { fr: "Accorder", en: "Approve" },
  approvedBy: { fr: "accordée par", en: "approved by" },
  approvalOffline: { fr: "Hors ligne : l'accord d'un responsable demande le serveur.", en: "Offline: a manager's approval needs the server." },
  method_gift_card: { fr: "Carte cadeau", en: "Gift card" },
  method_loyalty: { fr: "Points fidélité", en: "Loyalty points" },
  points: { fr: "points", en: "points" },
  customer: { fr: "Client", en: "Customer" },
  customerHelp: {
    fr: "Téléphone, nom, e-mail ou n° de carte de fidélité, puis Entrée.",
    en: "Phone, name, e-mail or loyalty card number, then Enter.",
  },
  customerQuery: { fr: "Rechercher un client", en: "Find a customer" },
  noCustomer: { fr: "Aucun client", en: "No customer found" },
  customerOffline: { fr: "Hors ligne : l'annuaire des clients demande le serveur.", en: "Offline: the customer directory needs the server." },
  giftCardCode: { fr: "Code de la carte cadeau", en: "Gift card code" },
  creditNoteCode: { fr: "Code de l'avoir (imprimé sur le ticket de retour)", en: "Credit note code (printed on the return's receipt)" },
  instrumentAmount: { fr: "Montant à utiliser (€)", en: "Amount to use (€)" },
  takeTender: { fr: "Utiliser", en: "Use" },
  instrumentState: { fr: "Inutilisable", en: "Not usable" },
  noBalance: { fr: "Solde épuisé", en: "No balance left" },
  restDue: { fr: "le reste est dû", en: "the rest is due" },
  storedValueOffline: {
    fr: "Hors ligne : points, cartes cadeaux et avoirs se vérifient sur le serveur. Les espèces restent possibles.",
    en: "Offline: points, gift cards and credit notes are checked on the server. Cash is still available.",
  },
  returnRefused: { fr: "Retour refusé par le serveur", en: "Return refused by the server" },
  saleRefused: { fr: "Vente refusée par le serveur", en: "Sale refused by the server" },
  movementTitle: { fr: "Mouvement de caisse", en: "Cash movement" },
  movement_paid_in: { fr: "Apport", en: "Paid in" },
  movement_paid_out: { fr: "Sortie", en: "Paid out" },
  movement_drop: { fr: "Dépôt au coffre", en: "Drop to the safe" },
  movementAmount: { fr: "Montant (€)", en: "Amount (€)" },
  movementReason: { fr: "Motif", en: "Reason" },
  movementQueued: { fr: "en attente d'envoi", en: "waiting to be sent" },
  movementDone: { fr: "enregistré", en: "recorded" },
  amountBad: { fr: "Un montant en euros, plus de 0 (12,50 ou 12.50)", en: "An amount in euros, above 0 (12.50 or 12,50)" },
  amountFormat: { fr: "Un montant en euros, comme 12,50 (ou 12.50)", en: "An amount in euros, such as 12.50 (or 12,50)" },
  method_credit_note: { fr: "Avoir", en: "Credit note" },
  returnTitle: { fr: "Retour", en: "Return" },
  returnHelp: {
    fr: "Scannez ou tapez le numéro du ticket (T-…), puis choisissez les articles rendus.",
    en: "Scan or type the receipt's number (T-…), then pick the articles brought back.",
  },
  receiptNumber: { fr: "N° du ticket", en: "Receipt number" },
  find: { fr: "Rechercher", en: "Find" },
  receiptUnknown: { fr: "Aucune vente sous ce numéro", en: "No sale with this number" },
  notASale: { fr: "Ce ticket n'est pas une vente : rien à reprendre.", en: "This receipt is not a sale: nothing to take back." },
  returnOffline: {
    fr: "Hors ligne : retrouver un ticket demande le serveur.",
    en: "Offline: finding a receipt needs the server.",
  },
  sold: { fr: "vendus", en: "sold" },
  returnable: { fr: "reprenables", en: "returnable" },
  refund: { fr: "Remboursement", en: "Refund" },
  refundBy: { fr: "Rembourser en", en: "Refund by" },
  refundConfirm: { fr: "Rembourser", en: "Refund" },
  refundCash: { fr: "À rendre en espèces", en: "Cash to give back" },
  returnDone: { fr: "Retour enregistré", en: "Return recorded" },
  returnQueued: { fr: "Retour en attente d'envoi", en: "Return waiting to be sent" },
  returnOf: { fr: "retour du ticket", en: "return of receipt" },
  creditNote: { fr: "Avoir", en: "Credit note" },
  cardCaptured: { fr: "Cartes encaissées", en: "Cards captured" },
  cardOrphans: { fr: "Accords carte sans vente (à rembourser)", en: "Card approvals without a sale (to give back)" },
} as const;

export type Word = keyof typeof WORDS;

const KEY = "till.lang";

function initial(): Lang {
  let kept: string | null = null;
  try {
    kept = typeof localStorage === "undefined" ? null : localStorage.getItem(KEY);
  } catch {
    kept = null;
  }
  if (kept === "fr" || kept === "en") return kept;
  const browser = typeof navigator === "undefined" ? "fr" : navigator.language || "fr";
  return browser.toLowerCase().startsWith("en") ? "en" : "fr";
}

let lang: Lang = initial();

export function currentLang(): Lang {
  return lang;
}

export function setLang(next: Lang): void {
  lang = next;
  if (typeof document !== "undefined") document.documentElement.lang = next;
  try {
    localStorage.setItem(KEY, next);
  } catch {
    // private mode: the switch lasts for the page
  }
}

export function t(word: Word): string {
  return WORDS[word][lang];
}

/** Integer cents written as euros in the current language: 1 234,50 € or €1,234.50. */
// A formatter is costly to make (a few of them per line of the cart on every scan): one per language.
const moneyFormats = new Map<string, Intl.NumberFormat>();
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();

export function money(cents: number): string {
  const locale = lang === "fr" ? "fr-FR" : "en-GB";
  let format = moneyFormats.get(locale);
  if (format === undefined) {
    format = new Intl.NumberFormat(locale, { style: "currency", currency: "EUR" });
    moneyFormats.set(locale, format);
  }
  return format.format(cents / 100);
}

/**
 * Euros typed by a person as integer cents, whatever the till's language: a decimal comma or a
 * point ("12", "12,5", "12.50", "0,05"), spaces between digits ("1 000,00") and a euro sign at
 * either end are taken; anything else (a sign, an exponent, a third decimal, two separators) is
 * null. The digits are read as digits, never through a float, so no amount is rounded. Every
 * amount field of the till reads through this one function.
 */
export function parseEuros(text: string): number | null {
  const clean = text.replace(/\s/g, "").replace(/^€|€$/g, "");
  const match = /^(\d{1,9})(?:[.,](\d{0,2}))?$/.exec(clean);
  if (match === null) return null;
  const units = match[1] ?? "0";
  const fraction = (match[2] ?? "").padEnd(2, "0");
  return Number(units) * 100 + Number(fraction);
}

/**
 * Integer cents written as a person types them in the till's language, with no thousands
 * separator and no currency: `12,50` in French, `12.50` in English. What the till prefills into
 * an amount field; parseEuros reads it back to the same cents.
 */
export function amountText(cents: number): string {
  const size = Math.abs(Math.trunc(cents));
  const whole = Math.floor(size / 100);
  const part = String(size % 100).padStart(2, "0");
  return `${cents < 0 ? "-" : ""}${whole}${lang === "fr" ? "," : "."}${part}`;
}

export function dateTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const locale = lang === "fr" ? "fr-FR" : "en-GB";
  let format = dateTimeFormats.get(locale);
  if (format === undefined) {
    format = new Intl.DateTimeFormat(locale, { dateStyle: "short", timeStyle: "short" });
    dateTimeFormats.set(locale, format);
  }
  return format.format(date);
}

/** Where Velo & Co trades: its stores in the Pacific Northwest and the towns its customers live in. */

export interface StoreSite {
  name: string;
  street: string;
  city: string;
  state: string;
  postalCode: string;
  openedOn: string;
  squareFeet: number;
  /** Relative foot traffic, which drives how many orders, staff and stock the store gets. */
  traffic: number;
  hasServiceCenter: boolean;
  /** Towns whose residents shop here, with their ZIP codes. */
  catchment: readonly Town[];
}

export interface Town {
  city: string;
  state: string;
  zips: readonly string[];
}

export const STORE_SITES: readonly StoreSite[] = [
  {
    name: "Velo & Co Seattle Fremont", street: "3410 Fremont Ave N", city: "Seattle", state: "WA", postalCode: "98103",
    openedOn: "2009-04-18", squareFeet: 14_500, traffic: 1.6, hasServiceCenter: true,
    catchment: [{ city: "Seattle", state: "WA", zips: ["98103", "98107", "98115", "98122", "98118"] }, { city: "Shoreline", state: "WA", zips: ["98133", "98155"] }, { city: "Edmonds", state: "WA", zips: ["98020"] }],
  },
  {
    name: "Velo & Co Portland Pearl", street: "1120 NW Glisan St", city: "Portland", state: "OR", postalCode: "97209",
    openedOn: "2011-06-11", squareFeet: 12_800, traffic: 1.45, hasServiceCenter: true,
    catchment: [{ city: "Portland", state: "OR", zips: ["97209", "97210", "97227", "97232"] }, { city: "Beaverton", state: "OR", zips: ["97005", "97006"] }, { city: "Vancouver", state: "WA", zips: ["98660", "98683"] }],
  },
  {
    name: "Velo & Co Bellevue", street: "455 Bellevue Way NE", city: "Bellevue", state: "WA", postalCode: "98004",
    openedOn: "2012-03-10", squareFeet: 11_000, traffic: 1.3, hasServiceCenter: true,
    catchment: [{ city: "Bellevue", state: "WA", zips: ["98004", "98006", "98008"] }, { city: "Redmond", state: "WA", zips: ["98052"] }, { city: "Kirkland", state: "WA", zips: ["98033"] }, { city: "Issaquah", state: "WA", zips: ["98027"] }],
  },
  {
    name: "Velo & Co Tacoma", street: "2302 Pacific Ave", city: "Tacoma", state: "WA", postalCode: "98402",
    openedOn: "2014-05-03", squareFeet: 9_200, traffic: 0.95, hasServiceCenter: true,
    catchment: [{ city: "Tacoma", state: "WA", zips: ["98402", "98403", "98406"] }, { city: "Puyallup", state: "WA", zips: ["98371", "98374"] }, { city: "Lakewood", state: "WA", zips: ["98499"] }],
  },
  {
    name: "Velo & Co Eugene", street: "845 Willamette St", city: "Eugene", state: "OR", postalCode: "97401",
    openedOn: "2015-03-14", squareFeet: 8_400, traffic: 0.9, hasServiceCenter: true,
    catchment: [{ city: "Eugene", state: "OR", zips: ["97401", "97403", "97405"] }, { city: "Springfield", state: "OR", zips: ["97477"] }],
  },
  {
    name: "Velo & Co Spokane", street: "718 W Riverside Ave", city: "Spokane", state: "WA", postalCode: "99201",
    openedOn: "2016-08-20", squareFeet: 8_900, traffic: 0.85, hasServiceCenter: true,
    catchment: [{ city: "Spokane", state: "WA", zips: ["99201", "99203", "99205"] }, { city: "Spokane Valley", state: "WA", zips: ["99216"] }, { city: "Coeur d'Alene", state: "ID", zips: ["83814"] }],
  },
  {
    name: "Velo & Co Portland Sellwood", street: "7920 SE 13th Ave", city: "Portland", state: "OR", postalCode: "97202",
    openedOn: "2017-04-01", squareFeet: 6_100, traffic: 0.8, hasServiceCenter: false,
    catchment: [{ city: "Portland", state: "OR", zips: ["97202", "97206", "97214"] }, { city: "Milwaukie", state: "OR", zips: ["97222"] }, { city: "Lake Oswego", state: "OR", zips: ["97034"] }],
  },
  {
    name: "Velo & Co Boise", street: "611 W Main St", city: "Boise", state: "ID", postalCode: "83702",
    openedOn: "2018-04-07", squareFeet: 9_800, traffic: 0.9, hasServiceCenter: true,
    catchment: [{ city: "Boise", state: "ID", zips: ["83702", "83705", "83706"] }, { city: "Meridian", state: "ID", zips: ["83642"] }, { city: "Nampa", state: "ID", zips: ["83651"] }],
  },
  {
    name: "Velo & Co Bend", street: "1011 NW Bond St", city: "Bend", state: "OR", postalCode: "97703",
    openedOn: "2019-05-18", squareFeet: 7_600, traffic: 0.95, hasServiceCenter: true,
    catchment: [{ city: "Bend", state: "OR", zips: ["97701", "97702", "97703"] }, { city: "Redmond", state: "OR", zips: ["97756"] }, { city: "Sisters", state: "OR", zips: ["97759"] }],
  },
  {
    name: "Velo & Co Olympia", street: "402 Capitol Way S", city: "Olympia", state: "WA", postalCode: "98501",
    openedOn: "2021-03-27", squareFeet: 5_900, traffic: 0.6, hasServiceCenter: false,
    catchment: [{ city: "Olympia", state: "WA", zips: ["98501", "98502"] }, { city: "Lacey", state: "WA", zips: ["98503"] }, { city: "Tumwater", state: "WA", zips: ["98512"] }],
  },
  {
    name: "Velo & Co Bellingham", street: "1306 Commercial St", city: "Bellingham", state: "WA", postalCode: "98225",
    openedOn: "2023-09-16", squareFeet: 6_800, traffic: 0.7, hasServiceCenter: true,
    catchment: [{ city: "Bellingham", state: "WA", zips: ["98225", "98226", "98229"] }, { city: "Ferndale", state: "WA", zips: ["98248"] }],
  },
  {
    name: "Velo & Co Salem", street: "235 Liberty St NE", city: "Salem", state: "OR", postalCode: "97301",
    openedOn: "2024-04-13", squareFeet: 7_100, traffic: 0.7, hasServiceCenter: true,
    catchment: [{ city: "Salem", state: "OR", zips: ["97301", "97302", "97304"] }, { city: "Keizer", state: "OR", zips: ["97303"] }],
  },
];

/** Online customers who live nowhere near a store; their orders ship from the Seattle or Portland stores. */
export const REMOTE_TOWNS: readonly Town[] = [
  { city: "San Francisco", state: "CA", zips: ["94110", "94117"] },
  { city: "Sacramento", state: "CA", zips: ["95814"] },
  { city: "Missoula", state: "MT", zips: ["59801"] },
  { city: "Denver", state: "CO", zips: ["80205", "80211"] },
  { city: "Salt Lake City", state: "UT", zips: ["84102"] },
  { city: "Reno", state: "NV", zips: ["89501"] },
  { city: "Anchorage", state: "AK", zips: ["99501"] },
  { city: "Juneau", state: "AK", zips: ["99801"] },
];

export const FIRST_NAMES: readonly string[] = [
  "James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda", "David", "Elizabeth", "William", "Barbara",
  "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Chris", "Karen", "Daniel", "Lisa", "Matthew", "Nancy",
  "Anthony", "Sandra", "Mark", "Ashley", "Steven", "Emily", "Andrew", "Michelle", "Joshua", "Amanda", "Kevin", "Melissa",
  "Brian", "Stephanie", "George", "Rebecca", "Timothy", "Laura", "Ryan", "Hannah", "Jacob", "Megan", "Nathan", "Rachel",
  "Tyler", "Olivia", "Aaron", "Emma", "Ethan", "Sophia", "Noah", "Ava", "Liam", "Mia", "Lucas", "Chloe", "Owen", "Grace",
  "Wei", "Mei", "Hiroshi", "Yuki", "Priya", "Arjun", "Carlos", "Sofia", "Diego", "Lucia", "Mateo", "Camila", "Omar",
  "Fatima", "Ahmed", "Leila", "Ivan", "Elena", "Nikolai", "Anya", "Minh", "Linh", "Jae", "Soo-jin", "Kofi", "Amara",
  "Sean", "Siobhan", "Lars", "Ingrid", "Pierre", "Camille", "Marco", "Giulia", "Dakota", "River", "Quinn", "Rowan",
];

export const LAST_NAMES: readonly string[] = [
  "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez", "Hernandez",
  "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson",
  "White", "Harris", "Sanchez", "Clark", "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King", "Wright",
  "Scott", "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Baker", "Hall", "Rivera", "Campbell",
  "Mitchell", "Carter", "Roberts", "Chen", "Wang", "Kim", "Park", "Patel", "Shah", "Tanaka", "Sato", "Nakamura", "Olsen",
  "Larsen", "Johansson", "Lindqvist", "Berg", "O'Brien", "O'Connor", "McCarthy", "Murphy", "Sullivan", "Kowalski",
  "Novak", "Ivanov", "Petrov", "Schmidt", "Weber", "Fischer", "Rossi", "Bianchi", "Dubois", "Moreau", "Tran", "Pham",
  "Okafor", "Mensah", "Haddad", "Khan", "Singh", "Gupta", "Reyes", "Cruz", "Morales", "Ortiz", "Gutierrez", "Chavez",
  "Ward", "Cooper", "Bennett", "Hughes", "Price", "Sanders", "Foster", "Graham", "Wallace", "Hayes", "Fox", "Holt",
];

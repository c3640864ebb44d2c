/**
 * Stores and the people who work in them: a head office (no store), three regional managers, and per store
 * a manager, an assistant, mechanics where there is a service centre and sales associates. Employees come
 * after their managers so the manager_id self-reference holds row by row; turnover leaves former
 * employees (termination_date set) next to their replacements.
 */
import type { Rng } from "../../../src/core/rng";
import { LAST_DAY, dayBetween, dayOf, isoDate } from "./calendar";
import { FIRST_NAMES, LAST_NAMES, STORE_SITES } from "./places";
import { between, chance, pick } from "./random";
import type { Row } from "./sql-writer";

export interface StaffMember {
  employeeId: number;
  storeId: number;
  hireDay: number;
  /** Last day worked, or undefined while still employed. */
  endDay: number | undefined;
  /** Relative share of the store's till sales. */
  salesWeight: number;
}

export interface Org {
  stores: Row[];
  employees: Row[];
  /** Store staff by store id. */
  staff: Map<number, StaffMember[]>;
}

const REGIONS = [
  { title: "Regional Manager - Puget Sound", cities: ["Seattle", "Bellevue", "Tacoma", "Olympia", "Bellingham"] },
  { title: "Regional Manager - Oregon", cities: ["Portland", "Eugene", "Bend", "Salem"] },
  { title: "Regional Manager - Inland Northwest", cities: ["Spokane", "Boise"] },
] as const;

interface Hire {
  title: string;
  department: string;
  storeId: number | null;
  managerId: number | null;
  hireDay: number;
  salary: number;
  salesWeight: number;
  /** Chance per year that this person leaves; 0 keeps them for the whole history. */
  yearlyTurnover: number;
}

export function generateOrg(rng: Rng): Org {
  const stores: Row[] = STORE_SITES.map((s, i) => ({
    store_id: i + 1,
    name: s.name,
    street_address: s.street,
    city: s.city,
    state: s.state,
    postal_code: s.postalCode,
    phone: `(${areaCode(s.state, s.city)}) 555-${String(100 + i * 7).padStart(4, "0")}`,
    opened_on: s.openedOn,
    square_feet: s.squareFeet,
    has_service_center: s.hasServiceCenter ? 1 : 0,
  }));

  const employees: Row[] = [];
  const staff = new Map<number, StaffMember[]>();
  const emails = new Set<string>();

  const hire = (h: Hire): number => {
    let hireDay = h.hireDay;
    // Leaf positions (associates, mechanics) are refilled when someone leaves; managers never leave here,
    // so their reports' manager_id stays true for the whole history.
    for (;;) {
      const id = employees.length + 1;
      const tenureYears = h.yearlyTurnover > 0 ? -Math.log(1 - rng.next()) / h.yearlyTurnover : Infinity;
      const leaves = hireDay + Math.round(tenureYears * 365);
      const endDay = leaves <= LAST_DAY ? leaves : undefined;
      const first = pick(rng, FIRST_NAMES);
      const last = pick(rng, LAST_NAMES);
      employees.push({
        employee_id: id,
        first_name: first,
        last_name: last,
        email: uniqueEmail(emails, first, last),
        job_title: h.title,
        department: h.department,
        store_id: h.storeId,
        manager_id: h.managerId,
        hire_date: isoDate(hireDay),
        termination_date: endDay === undefined ? null : isoDate(endDay),
        annual_salary: Math.round(h.salary * (0.92 + rng.next() * 0.16) / 250) * 250,
      });
      if (h.storeId !== null) {
        const list = staff.get(h.storeId) ?? [];
        list.push({ employeeId: id, storeId: h.storeId, hireDay, endDay, salesWeight: h.salesWeight });
        staff.set(h.storeId, list);
      }
      if (endDay === undefined) return id;
      hireDay = endDay + between(rng, 7, 45);
      if (hireDay > LAST_DAY) return id;
    }
  };

  const office = (title: string, department: string, managerId: number | null, hireOn: string, salary: number): number =>
    hire({ title, department, storeId: null, managerId, hireDay: dayOf(hireOn), salary, salesWeight: 0, yearlyTurnover: 0 });
  const ceo = office("Chief Executive Officer", "Executive", null, "2009-01-05", 215_000);
  const coo = office("Chief Operating Officer", "Operations", ceo, "2012-09-17", 168_000);
  const cfo = office("Chief Financial Officer", "Finance", ceo, "2015-02-02", 162_000);
  const ecom = office("Director of E-commerce", "E-commerce", ceo, "2019-10-14", 138_000);
  const purchasing = office("Purchasing Manager", "Purchasing", coo, "2016-05-23", 104_000);
  office("HR Manager", "Human Resources", cfo, "2017-08-07", 96_000);
  const regional = REGIONS.map((r, i) => ({ ...r, id: office(r.title, "Operations", coo, isoDate(dayOf("2013-04-01") + i * 420), 112_000) }));
  office("Buyer", "Purchasing", purchasing, "2018-03-12", 72_000);
  office("Buyer", "Purchasing", purchasing, "2022-06-20", 68_000);
  office("Financial Analyst", "Finance", cfo, "2020-01-13", 78_000);
  office("E-commerce Specialist", "E-commerce", ecom, "2021-04-05", 66_000);
  office("E-commerce Specialist", "E-commerce", ecom, "2023-02-27", 64_000);
  office("Customer Service Representative", "E-commerce", ecom, "2022-11-07", 46_000);

  STORE_SITES.forEach((site, i) => {
    const storeId = i + 1;
    const opened = dayOf(site.openedOn);
    const region = regional.find((r) => (r.cities as readonly string[]).includes(site.city));
    const earliest = Math.max(opened - 45, dayOf("2016-01-01"));
    const startDay = (): number => dayBetween(rng, earliest, Math.max(earliest, dayOf("2022-12-31")));
    const store = (title: string, department: string, managerId: number | null, salary: number, salesWeight: number, yearlyTurnover: number, hireDay = startDay()): number =>
      hire({ title, department, storeId, managerId, hireDay, salary, salesWeight, yearlyTurnover });

    const manager = store("Store Manager", "Retail", region?.id ?? coo, 74_000 + Math.round(site.traffic * 8_000), 0.4, 0, opened - 60);
    const assistant = store("Assistant Store Manager", "Retail", manager, 55_000, 0.8, 0, opened - 30);
    if (site.hasServiceCenter) {
      const head = store("Head Mechanic", "Service", manager, 55_000, 0.2, 0, opened - 30);
      const mechanics = site.traffic >= 1 ? 2 : 1;
      for (let m = 0; m < mechanics; m++) store("Bike Mechanic", "Service", head, 50_500, 0.1, 0.08);
    }
    const associates = Math.round(2 + site.traffic * 2.5);
    for (let a = 0; a < associates; a++) {
      const senior = chance(rng, 0.2);
      store(senior ? "Senior Sales Associate" : "Sales Associate", "Retail", assistant, senior ? 46_000 : 40_000, 1, 0.1);
    }
  });

  return { stores, employees, staff };
}

function uniqueEmail(taken: Set<string>, first: string, last: string): string {
  const base = `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, "");
  let email = `${base}@veloandco.com`;
  for (let n = 2; taken.has(email); n++) email = `${base}${n}@veloandco.com`;
  taken.add(email);
  return email;
}

function areaCode(state: string, city: string): string {
  const codes: Readonly<Record<string, string>> = {
    Seattle: "206", Bellevue: "425", Tacoma: "253", Olympia: "360", Bellingham: "360", Spokane: "509",
    Portland: "503", Salem: "503", Eugene: "541", Bend: "541", Boise: "208",
  };
  return codes[city] ?? (state === "ID" ? "208" : "360");
}

/** Store staff on the payroll on `day`, for attributing a till sale or a processed return. */
export function staffOnDuty(org: Org, storeId: number, day: number): StaffMember[] {
  return (org.staff.get(storeId) ?? []).filter((s) => s.hireDay <= day && (s.endDay === undefined || s.endDay >= day));
}

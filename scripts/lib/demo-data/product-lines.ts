/**
 * What Velo & Co sells: its category tree and, per leaf category, the brands, models and price bands the
 * product generator combines. Brands are invented; prices are in US dollars at list.
 */

export interface CategoryDef {
  name: string;
  /** Index of the parent in CATEGORY_TREE, or undefined for a top-level category. */
  parent: number | undefined;
}

/** Parents come before their children, so ids (index + 1) satisfy the parent_id foreign key in order. */
export const CATEGORY_TREE: readonly CategoryDef[] = [
  { name: "Bikes", parent: undefined },
  { name: "Components", parent: undefined },
  { name: "Accessories", parent: undefined },
  { name: "Apparel", parent: undefined },
  { name: "Road Bikes", parent: 0 },
  { name: "Mountain Bikes", parent: 0 },
  { name: "Hybrid & City Bikes", parent: 0 },
  { name: "Electric Bikes", parent: 0 },
  { name: "Gravel Bikes", parent: 0 },
  { name: "Kids' Bikes", parent: 0 },
  { name: "Drivetrain", parent: 1 },
  { name: "Brakes", parent: 1 },
  { name: "Wheels & Tires", parent: 1 },
  { name: "Cockpit & Saddles", parent: 1 },
  { name: "Helmets", parent: 2 },
  { name: "Lights", parent: 2 },
  { name: "Locks", parent: 2 },
  { name: "Bags & Racks", parent: 2 },
  { name: "Tools & Pumps", parent: 2 },
  { name: "Hydration & Nutrition", parent: 2 },
  { name: "Jerseys", parent: 3 },
  { name: "Shorts & Bibs", parent: 3 },
  { name: "Gloves", parent: 3 },
  { name: "Shoes", parent: 3 },
  { name: "Jackets", parent: 3 },
];

export type Group = "bike" | "component" | "accessory" | "apparel";

export interface ProductLine {
  category: string;
  group: Group;
  count: number;
  brands: readonly string[];
  /** Bikes: model names combined with TRIMS; others: item name and its typical price. */
  items: readonly (readonly [string, number])[];
  /** Spread of the price around the item's typical price. */
  priceSpread: number;
  weightKg: readonly [number, number] | undefined;
  colors: readonly string[] | undefined;
}

export const BIKE_TRIMS = [["Sport", 0.8], ["Comp", 1.0], ["Pro", 1.45], ["SL", 1.75], ["Elite", 2.2]] as const;
export const FRAME_COLORS = ["Black", "Slate Gray", "Forest Green", "Glacier Blue", "Signal Red", "Sand", "Matte Olive", "White"] as const;
const KIT_COLORS = ["Black", "Navy", "Charcoal", "Red", "Teal", "Hi-Vis Yellow"] as const;

export const PRODUCT_LINES: readonly ProductLine[] = [
  { category: "Road Bikes", group: "bike", count: 18, brands: ["Ridgeline", "Northwind", "Velo & Co"], items: [["Tempo", 1400], ["Meridian", 2100], ["Strada", 1700], ["Aeris", 2900]], priceSpread: 0.1, weightKg: [7.4, 10.5], colors: FRAME_COLORS },
  { category: "Mountain Bikes", group: "bike", count: 20, brands: ["Cascadia", "Talus", "Ridgeline"], items: [["Switchback", 1300], ["Basalt", 2300], ["Timberline", 1800], ["Scree", 950]], priceSpread: 0.1, weightKg: [12.5, 16.5], colors: FRAME_COLORS },
  { category: "Hybrid & City Bikes", group: "bike", count: 14, brands: ["Velo & Co", "Northwind", "Urbanaut"], items: [["Commuter", 650], ["Lakeside", 560], ["Metro", 820]], priceSpread: 0.1, weightKg: [11, 14], colors: FRAME_COLORS },
  { category: "Electric Bikes", group: "bike", count: 16, brands: ["Ampere", "Urbanaut", "Cascadia"], items: [["Volt City", 2300], ["Volt Trail", 3600], ["Cargo Hauler", 3100], ["Glide", 1900]], priceSpread: 0.08, weightKg: [21, 29], colors: FRAME_COLORS },
  { category: "Gravel Bikes", group: "bike", count: 12, brands: ["Ridgeline", "Talus", "Northwind"], items: [["Dirtroad", 1600], ["Outback", 2300], ["Cinder", 1900]], priceSpread: 0.1, weightKg: [8.6, 11], colors: FRAME_COLORS },
  { category: "Kids' Bikes", group: "bike", count: 10, brands: ["Sprout", "Velo & Co"], items: [["Balance 12\"", 160], ["Trailkid 20\"", 330], ["Rover 24\"", 420], ["Pedal Pal 16\"", 240]], priceSpread: 0.12, weightKg: [3.5, 11], colors: FRAME_COLORS },
  { category: "Drivetrain", group: "component", count: 14, brands: ["Shiftline", "Velo & Co"], items: [["11-Speed Chain", 38], ["12-Speed Chain", 55], ["Cassette 11-34T", 85], ["Cassette 10-51T", 210], ["Road Crankset 50/34", 260], ["Rear Derailleur 12s", 190], ["Chainring 32T", 60], ["Bottom Bracket BSA", 35]], priceSpread: 0.15, weightKg: [0.1, 0.9], colors: undefined },
  { category: "Brakes", group: "component", count: 10, brands: ["Stopwell", "Shiftline"], items: [["Hydraulic Disc Brake Set", 320], ["Disc Brake Pads (pair)", 24], ["Rotor 160mm", 45], ["Rotor 180mm", 52], ["Rim Brake Caliper", 65], ["Brake Cable Kit", 18]], priceSpread: 0.15, weightKg: [0.05, 0.7], colors: undefined },
  { category: "Wheels & Tires", group: "component", count: 18, brands: ["Rimcraft", "Contour", "Velo & Co"], items: [["Road Tire 700x28", 55], ["Gravel Tire 700x40", 62], ["MTB Tire 29x2.4", 72], ["Inner Tube 700c", 9], ["Inner Tube 29\"", 11], ["Tubeless Sealant 500ml", 24], ["Alloy Wheelset", 420], ["Carbon Wheelset 45mm", 1350]], priceSpread: 0.12, weightKg: [0.1, 1.8], colors: undefined },
  { category: "Cockpit & Saddles", group: "component", count: 16, brands: ["Contour", "Velo & Co", "Shiftline"], items: [["Comfort Saddle", 45], ["Race Saddle", 130], ["Bar Tape", 28], ["Stem 90mm", 55], ["Flat Bar 760mm", 65], ["Dropper Post 150mm", 290], ["Clipless Pedals", 120], ["Flat Pedals", 60]], priceSpread: 0.12, weightKg: [0.05, 0.6], colors: undefined },
  { category: "Helmets", group: "accessory", count: 14, brands: ["Halo", "Velo & Co", "Talus"], items: [["Road Helmet MIPS", 150], ["Commuter Helmet", 70], ["Trail Helmet MIPS", 130], ["Kids Helmet", 45], ["Full-Face Helmet", 260]], priceSpread: 0.12, weightKg: [0.25, 0.9], colors: KIT_COLORS },
  { category: "Lights", group: "accessory", count: 10, brands: ["Lumen", "Velo & Co"], items: [["Front Light 800lm", 75], ["Front Light 1500lm", 130], ["Rear Light USB", 35], ["Light Set", 60], ["Helmet Light", 55]], priceSpread: 0.12, weightKg: [0.05, 0.25], colors: undefined },
  { category: "Locks", group: "accessory", count: 8, brands: ["Lockstead", "Velo & Co"], items: [["U-Lock", 65], ["Folding Lock", 95], ["Chain Lock 110cm", 110], ["Cable Lock", 25]], priceSpread: 0.12, weightKg: [0.3, 2.4], colors: undefined },
  { category: "Bags & Racks", group: "accessory", count: 12, brands: ["Packwell", "Velo & Co"], items: [["Pannier Pair", 140], ["Saddle Bag", 32], ["Frame Bag", 70], ["Rear Rack", 60], ["Handlebar Bag", 85], ["Hitch Bike Rack", 380]], priceSpread: 0.12, weightKg: [0.1, 14], colors: undefined },
  { category: "Tools & Pumps", group: "accessory", count: 14, brands: ["Torqtool", "Velo & Co"], items: [["Floor Pump", 55], ["Mini Pump", 30], ["Multi-Tool 16", 35], ["Torque Wrench", 95], ["Chain Checker", 14], ["Repair Stand", 190], ["CO2 Inflator Kit", 28]], priceSpread: 0.12, weightKg: [0.05, 6], colors: undefined },
  { category: "Hydration & Nutrition", group: "accessory", count: 12, brands: ["Hydra", "Velo & Co"], items: [["Water Bottle 750ml", 12], ["Bottle Cage", 15], ["Hydration Pack 3L", 95], ["Energy Gel (box of 24)", 42], ["Electrolyte Mix", 22], ["Energy Bar (box of 12)", 28]], priceSpread: 0.1, weightKg: undefined, colors: undefined },
  { category: "Jerseys", group: "apparel", count: 18, brands: ["Stratus", "Pedal Theory", "Velo & Co"], items: [["Short Sleeve Jersey", 85], ["Long Sleeve Jersey", 105], ["Trail Jersey", 55], ["Club Jersey", 75]], priceSpread: 0.12, weightKg: undefined, colors: KIT_COLORS },
  { category: "Shorts & Bibs", group: "apparel", count: 14, brands: ["Stratus", "Pedal Theory"], items: [["Bib Shorts", 140], ["Padded Liner Shorts", 55], ["Baggy Trail Shorts", 80], ["Winter Bib Tights", 170]], priceSpread: 0.12, weightKg: undefined, colors: KIT_COLORS },
  { category: "Gloves", group: "apparel", count: 12, brands: ["Stratus", "Velo & Co", "Talus"], items: [["Summer Gloves", 30], ["Full-Finger Gloves", 38], ["Winter Gloves", 60], ["Rain Gloves", 50]], priceSpread: 0.12, weightKg: undefined, colors: KIT_COLORS },
  { category: "Shoes", group: "apparel", count: 14, brands: ["Pedal Theory", "Talus"], items: [["Road Shoes", 190], ["MTB Shoes", 160], ["Flat Pedal Shoes", 120], ["Shoe Covers", 45]], priceSpread: 0.12, weightKg: [0.3, 0.9], colors: KIT_COLORS },
  { category: "Jackets", group: "apparel", count: 12, brands: ["Stratus", "Pedal Theory", "Velo & Co"], items: [["Rain Jacket", 160], ["Wind Vest", 90], ["Insulated Jacket", 220], ["Packable Shell", 120]], priceSpread: 0.12, weightKg: undefined, colors: KIT_COLORS },
];

export interface SupplierDef {
  name: string;
  country: string;
  /** Brands whose products this supplier is the primary source for. */
  brands: readonly string[];
  leadTimeDays: number;
  active: boolean;
}

/** The two distributors carry everything and serve as second sources; one old supplier is inactive. */
export const SUPPLIER_DEFS: readonly SupplierDef[] = [
  { name: "Cascadia Bicycle Distribution", country: "USA", brands: [], leadTimeDays: 4, active: true },
  { name: "Pacific Cycle Supply", country: "USA", brands: [], leadTimeDays: 6, active: true },
  { name: "Ridgeline Bicycles Inc.", country: "USA", brands: ["Ridgeline"], leadTimeDays: 14, active: true },
  { name: "Cascadia Bikes LLC", country: "USA", brands: ["Cascadia"], leadTimeDays: 12, active: true },
  { name: "Northwind Cycles GmbH", country: "Germany", brands: ["Northwind"], leadTimeDays: 35, active: true },
  { name: "Talus Mountain Works", country: "Canada", brands: ["Talus"], leadTimeDays: 10, active: true },
  { name: "Formosa Frameworks Co.", country: "Taiwan", brands: ["Velo & Co", "Sprout"], leadTimeDays: 55, active: true },
  { name: "Ampere Mobility B.V.", country: "Netherlands", brands: ["Ampere", "Urbanaut"], leadTimeDays: 42, active: true },
  { name: "Taichung Precision Parts", country: "Taiwan", brands: ["Shiftline", "Rimcraft"], leadTimeDays: 50, active: true },
  { name: "Stopwell S.r.l.", country: "Italy", brands: ["Stopwell", "Contour"], leadTimeDays: 30, active: true },
  { name: "Lumen Outdoor Gear", country: "Canada", brands: ["Lumen", "Halo"], leadTimeDays: 9, active: true },
  { name: "Lockstead Security", country: "USA", brands: ["Lockstead"], leadTimeDays: 7, active: true },
  { name: "Packwell Goods", country: "USA", brands: ["Packwell", "Hydra"], leadTimeDays: 5, active: true },
  { name: "Torqtool Ltd.", country: "United Kingdom", brands: ["Torqtool"], leadTimeDays: 28, active: true },
  { name: "Stratus Apparel Co.", country: "Canada", brands: ["Stratus", "Pedal Theory"], leadTimeDays: 12, active: true },
  { name: "Old Mill Bike Supply", country: "USA", brands: [], leadTimeDays: 8, active: false },
];

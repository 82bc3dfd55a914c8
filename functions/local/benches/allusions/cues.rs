//! The cues a digest writes with each fact of the recall-by-meaning
//! benchmark's sets (see cases.rs), written from each fact alone, as the
//! memory model would, without seeing the allusions.

#[rustfmt::skip]
pub const CUES_A: &[&[&str]] = &[
    &["flying", "aviation", "cessna", "cockpit", "飛行機", "操縦", "空港", "フライト"], // 0: Tom pilot's licence
    &["nuts", "epipen", "anaphylaxis", "food restrictions", "ナッツ", "アナフィラキシー", "食事制限", "エピペン"], // 1: Lena peanut allergy
    &["tamil nadu", "south india", "madras", "hometown", "インド", "南インド", "タミル語", "故郷"], // 2: Raj grew up in Chennai
    &["classical music", "concert", "strings", "rehearsal", "弦楽器", "クラシック", "演奏会", "リハーサル"], // 3: Olga cello, amateur orchestra
    &["dog", "walks", "puppy", "herding", "犬", "散歩", "牧羊犬", "ドッグラン"], // 4: Mike border collie Biscuit
    &["brazil", "lisbon", "bilingual", "language", "ブラジル", "サンパウロ", "語学", "リスボン"], // 5: Emi fluent Portuguese
    &["noodles", "broth", "kitchen", "chef", "スープ", "麺", "厨房", "料理人"], // 6: Daiki ramen cook five years
    &["padi", "reef", "underwater", "wetsuit", "潜水", "沖縄", "海中", "ライセンス"], // 7: Aoi certified scuba diver
    &["babies", "newborn", "paternity leave", "diapers", "育休", "赤ちゃん", "新生児", "子育て"], // 8: Sota father of twins
    &["sober", "non-alcoholic", "soft drinks", "teetotal", "下戸", "ノンアル", "飲み会", "ウーロン茶"], // 9: Mei doesn't drink alcohol
    &["honey", "hive", "apiary", "pollination", "蜂蜜", "養蜂", "巣箱", "ミツバチ"], // 10: Tom keeps bees
    &["germany", "moving abroad", "visa", "german", "ドイツ", "引っ越し", "海外移住", "送別会"], // 11: Lena relocating to Berlin
    &["tournament", "rating", "grandmaster", "openings", "大会", "ボードゲーム", "対局", "レーティング"], // 12: Raj competitive chess
    &["centenarian", "birthday", "longevity", "family", "百寿", "長寿", "お祝い", "おばあちゃん"], // 13: Olga's grandmother turned 100
    &["ipa", "hops", "malt", "craft", "クラフト", "ホップ", "発酵", "自家醸造"], // 14: Mike home-brews beer
    &["turntable", "lp", "record store", "analog", "ターンテーブル", "アナログ盤", "ジャズ", "ディスクユニオン"], // 15: Emi vinyl records
    &["angling", "offshore", "rod", "catch of the day", "釣果", "漁港", "アジ", "クーラーボックス"], // 16: ダイキ 週末に船釣り
    &["cows", "milk", "cheese", "hometown", "牛乳", "牧場", "十勝", "帰省"], // 17: アオイ 実家は北海道の酪農家
    &["wedding", "engagement", "ceremony", "honeymoon", "挙式", "披露宴", "新婚旅行", "ご祝儀"], // 18: メイ 来月結婚
    &["pets", "kittens", "litter box", "vet", "ペット", "動物病院", "多頭飼い", "肉球"], // 19: ソウタ 猫三匹
    &["chili", "hot sauce", "indian restaurant", "heat level", "スパイス", "唐辛子", "辛党", "名店"], // 20: ラージ 激辛カレー食べ歩き
    &["ceramics", "clay", "kiln", "pottery wheel", "ろくろ", "粘土", "器", "窯"], // 21: オルガ 土曜に陶芸教室
    &["martial arts", "dojo", "kata", "sparring", "武道", "道場", "組手", "型"], // 22: マイク 空手の黒帯
    &["injury", "cast", "snowboard", "hospital", "怪我", "ギプス", "リハビリ", "ゲレンデ"], // 23: エミ スキーで骨折、松葉杖
    &["himeji", "matsumoto", "samurai", "history", "天守閣", "石垣", "戦国時代", "日本史"], // 24: トム 城巡り五十か所以上
    &["teaching", "kids", "classroom", "education", "先生", "子ども", "授業", "担任"], // 25: レナ 元小学校教師
    &["music festival", "camping", "naeba", "live bands", "フェス", "苗場", "キャンプ", "夏フェス"], // 26: アオイ 毎年フジロック
    &["running", "sub-3", "race", "personal best", "ランニング", "自己ベスト", "練習", "大会"], // 27: ダイキ フルマラソン三時間切り
    &["hay fever", "allergy", "sneezing", "antihistamine", "くしゃみ", "マスク", "スギ", "鼻炎"], // 28: メイ 重い花粉症
    &["calligraphy", "brush", "ink", "kanji", "筆", "墨", "習字", "半紙"], // 29: ソウタ 書道五段
    &["dji", "footage", "flying", "camera", "動画", "撮影", "航空法", "飛行許可"], // 30: ソウタ ドローンで空撮
    &["tea ceremony", "matcha", "kimono", "wagashi", "抹茶", "着物", "和菓子", "お点前"], // 31: エミ 茶道十年
    &["ev", "tesla", "charging", "battery", "テスラ", "充電", "エコ", "バッテリー"], // 32: マイク 電気自動車に乗り換え
    &["mountain climbing", "hiking", "summit", "sunrise", "ご来光", "山頂", "ハイキング", "山小屋"], // 33: レナ 富士山に三回
    &["cold plunge", "ice bath", "open water", "hardy", "冷水浴", "氷点下", "アイスバス", "極寒"], // 34: オルガ 冬の朝に湖で寒中水泳
    &["japanese", "language exam", "kanji", "studying", "日本語", "能力試験", "漢字", "語学"], // 35: Raj passed JLPT N2
    &["turtle", "reptile", "pet", "longevity", "カメ", "爬虫類", "長生き", "ペット"], // 36: Tom 40-year-old tortoise Gerald
    &["festival", "matsuri", "percussion", "performance", "祭り", "打楽器", "バチ", "演奏"], // 37: Aoi taiko drums community group
    &["acrophobia", "vertigo", "rooftop", "rollercoaster", "高所恐怖症", "展望台", "観覧車", "吊り橋"], // 38: Mei afraid of heights
    &["colour vision", "deuteranopia", "palette", "accessibility", "色覚", "色弱", "配色", "見分け"], // 39: Daiki red-green colourblind
];

#[rustfmt::skip]
pub const CUES_B: &[&[&str]] = &[
    &["hive", "apiary", "pollen", "beeswax", "養蜂", "ミツバチ", "巣箱", "蜜蝋"], // 0: Nina bees in back garden, honey
    &["portugal", "fado", "pastel de nata", "hometown", "ポルトガル", "ファド", "エッグタルト", "故郷"], // 1: Paul grew up in Lisbon
    &["lichess", "blitz", "elo", "grandmaster", "チェス", "ボードゲーム", "対局", "レーティング"], // 2: Ivan online chess ~1900
    &["nuts", "epipen", "anaphylaxis", "food restrictions", "ナッツ", "アナフィラキシー", "食事制限", "アレルゲン"], // 3: Grace peanut allergy
    &["race", "running", "germany", "training", "ランニング", "42キロ", "ドイツ", "練習"], // 4: Omar Berlin marathon in September
    &["wine", "pairing", "restaurant", "vintage", "ワイン", "ぶどう", "レストラン", "転職"], // 5: Kaito ex-sommelier in Osaka
    &["maternity", "newborn", "daughter", "parenting", "産休", "育休", "出産", "子育て"], // 6: Hina baby girl, on leave
    &["hangul", "k-pop", "seoul", "language exam", "ハングル", "語学", "検定", "ソウル"], // 7: Ren studying Korean, TOPIK 4
    &["mazda", "mx-5", "mechanic", "transmission", "整備", "マツダ", "ロードスター", "工具"], // 8: Yui rebuilt her Miata's gearbox
    &["plant-based", "tofu", "meat-free", "soy milk", "菜食", "ベジタリアン", "豆腐", "植物性"], // 9: Taro is vegan
    &["australia", "relocation", "visa", "abroad", "オーストラリア", "引っ越し", "移住", "送別会"], // 10: Nina moving to Melbourne
    &["chorus", "harmony", "concert", "soprano", "合唱", "コーラス", "練習", "声楽"], // 11: Grace choir Thursday evenings
    &["dog", "rescue", "racing", "walks", "犬", "保護犬", "散歩", "里親"], // 12: Paul adopted retired greyhound
    &["padi", "reef", "underwater", "teaching", "潜水", "海中", "珊瑚礁", "沖縄"], // 13: Ivan scuba diving instructor
    &["middle east", "egypt", "quran", "bilingual", "中東", "エジプト", "母国語", "アラブ"], // 14: Omar native Arabic speaker
    &["yarn", "wool", "needles", "handmade", "毛糸", "編み物", "手芸", "セーター"], // 15: Kaito knits his own socks
    &["climbing", "chalk", "grades", "holds", "クライミング", "壁", "課題", "チョーク"], // 16: ヒナ 週3でボルダリングジム
    &["senior pet", "vet", "kitty", "whiskers", "ペット", "動物病院", "長生き", "介護"], // 17: レン 18歳の老猫
    &["tea ceremony", "matcha", "kimono", "wagashi", "抹茶", "着物", "和菓子", "お点前"], // 18: タロウ 表千家の茶道10年
    &["hokkaido", "snow festival", "student days", "miso ramen", "北海道", "雪まつり", "学生時代", "すすきの"], // 19: ユイ 大学時代に札幌
    &["trout", "fly rod", "river", "mountain stream", "ヤマメ", "イワナ", "アユ", "キャンプ"], // 20: カイト 休日に渓流釣り
    &["deaf", "sign language", "accessibility", "hearing impaired", "聴覚障害", "ろう者", "福祉", "社会貢献"], // 21: ヒナ 手話、ボランティア通訳
    &["pruning", "pine tree", "gardening", "miniature trees", "剪定", "園芸", "植木", "鉢"], // 22: レン 盆栽、黒松
    &["musician", "record label", "gigs", "guitar", "ライブ", "音楽", "ギター", "レコード会社"], // 23: タロウ 元プロのバンドマン
    &["boys", "kids", "parenting", "school", "子育て", "男の子", "育児", "兄弟"], // 24: ユイ 双子の息子
    &["calligraphy", "brush", "ink", "kanji", "筆", "墨", "習字", "半紙"], // 25: ニーナ 書道
    &["gardening", "tomatoes", "herbs", "planters", "トマト", "ハーブ", "プランター", "野菜"], // 26: オマール ベランダで家庭菜園
    &["motorcycle", "road trip", "touring", "camping", "ツーリング", "旅", "北海道", "ライダー"], // 27: ポール バイクで日本一周
    &["pointe shoes", "stage", "swan lake", "choreography", "トウシューズ", "舞台", "白鳥の湖", "踊り"], // 28: グレース 元プロのバレエダンサー
    &["steam", "cold plunge", "onsen", "totonou", "ととのう", "水風呂", "銭湯", "ロウリュ"], // 29: イワン サウナ巡り
    &["martial arts", "dojo", "shinai", "armor", "武道", "道場", "竹刀", "防具"], // 30: カイト 剣道三段
    &["canada", "montreal", "francophone", "bilingual", "カナダ", "モントリオール", "バイリンガル", "メープル"], // 31: ニーナ ケベック出身、フランス語
    &["chili", "mild", "hot sauce", "curry", "激辛", "唐辛子", "カレー", "甘口"], // 32: ヒナ 辛い食べ物が苦手
    &["architecture", "buildings", "design", "blueprints", "設計事務所", "図面", "建物", "デザイン"], // 33: オマール 元建築家
    &["northern lights", "reykjavik", "winter trip", "travel", "北欧", "レイキャビク", "旅行", "冬休み"], // 34: レン 年末にアイスランドへオーロラ
    &["colour vision", "deuteranopia", "palette", "accessibility", "色覚", "色弱", "配色", "見分け"], // 35: Paul red-green colourblind
    &["stretching", "meditation", "studio", "instructor", "ストレッチ", "瞑想", "レッスン", "ピラティス"], // 36: Grace yoga class Saturday mornings
    &["taiwan", "chinese", "bubble tea", "night market", "台湾", "中国語", "夜市", "タピオカ"], // 37: Ivan Taipei four years, Mandarin
    &["premier league", "football", "anfield", "soccer", "サッカー", "プレミアリーグ", "アンフィールド", "観戦"], // 38: Taro Liverpool FC fan
    &["turtle", "reptile", "pet", "longevity", "カメ", "爬虫類", "長生き", "ペット"], // 39: Yui 40-year-old tortoise Gerald
];
